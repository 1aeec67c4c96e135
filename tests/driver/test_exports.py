"""The curated public APIs: each `__all__` is exactly the public names, in isort order."""

from __future__ import annotations

import types

import pytest

import draplane.driver
import draplane.drivers.example
import draplane.node


def _isort_key(name: str) -> tuple[int, str]:
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


@pytest.mark.parametrize(
    "module",
    [
        pytest.param(draplane.driver, id="driver"),
        pytest.param(draplane.drivers.example, id="drivers-example"),
        pytest.param(draplane.node, id="node"),
    ],
)
def test_all_is_every_public_name_sorted(module: types.ModuleType) -> None:
    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert set(module.__all__) == public
    assert module.__all__ == sorted(module.__all__, key=_isort_key)
