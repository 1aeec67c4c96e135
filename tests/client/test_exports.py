"""`draplane.client` exports exactly its public names, listed in a sorted `__all__`."""

from __future__ import annotations

import types

import draplane.client as client_pkg


def test_all_lists_every_public_name() -> None:
    public = {
        name
        for name, value in vars(client_pkg).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert set(client_pkg.__all__) == public


def test_all_is_sorted_constants_then_classes_then_functions() -> None:
    def group(name: str) -> tuple[int, str]:
        if name.isupper():
            return (0, name)
        return (1 if name[0].isupper() else 2, name)

    assert client_pkg.__all__ == sorted(client_pkg.__all__, key=group)
