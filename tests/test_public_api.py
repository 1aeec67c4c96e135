"""Every curated package's `__all__` lists exactly its public names, in isort order (as trio and
httpx check their exports), so what outsiders may import is explicit."""

from __future__ import annotations

import importlib
import types

import pytest

PACKAGES = [
    "draplane.client",
    "draplane.controlplane",
    "draplane.dra",
    "draplane.dra.controller",
    "draplane.drivers.example",
    "draplane.kubeletplugin",
    "draplane.explain",
    "draplane.node",
    "draplane.scheduler.framework",
    "draplane.storage",
]


@pytest.mark.parametrize(
    "name", PACKAGES, ids=[name.removeprefix("draplane.") for name in PACKAGES]
)
def test_all_lists_exactly_the_public_names(name: str) -> None:
    package = importlib.import_module(name)
    exported = list(package.__all__)
    public = {
        attr
        for attr, value in vars(package).items()
        if not attr.startswith("_")
        and not isinstance(value, types.ModuleType)
        and attr not in ("annotations",)
    }
    assert set(exported) == public
    assert exported == sorted(exported, key=_isort_key)


def _isort_key(name: str) -> tuple[int, str]:
    """Constants, then classes, then functions, each alphabetically (ruff's RUF022 order)."""
    if name.isupper():
        return 0, name
    return (1, name) if name[0].isupper() else (2, name)
