"""`CycleState`: scratch space for one scheduling attempt, with typed `StateKey[T]` keys.

A plugin writes its private state object in PreFilter under its own key and reads it back in
later phases. Filter runs synchronously node after node, so no locking is needed. (No clone():
only preemption needs one, and draplane has none.)
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, cast

T = TypeVar("T")


class StateKey(Generic[T]):
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"StateKey({self.name!r})"


class CycleState:
    __slots__ = ("_data", "skip_filter_plugins", "skip_score_plugins")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: set[str] = set()
        """Plugins whose PreFilter returned Skip: their Filter is not called."""
        self.skip_score_plugins: set[str] = set()
        """Plugins whose PreScore returned Skip: their Score is not called."""

    def write(self, key: StateKey[T], value: T) -> None:
        self._data[key.name] = value

    def read(self, key: StateKey[T]) -> T:
        """The stored value; raises KeyError when the key was never written."""
        return cast(T, self._data[key.name])

    def get(self, key: StateKey[T]) -> T | None:
        return cast("T | None", self._data.get(key.name))
