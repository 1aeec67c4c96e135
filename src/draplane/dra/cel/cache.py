"""Selector results cached per device (k8s.io/dynamic-resource-allocation/cel cache + match cache).

`SelectorCache.matches(expression, driver, device)` compiles each expression once (by text) and
evaluates each (device, expression) pair once. Entries are keyed by the identity of the device dict
and keep a reference to it, so a ResourceSlice replaced by the informer (new dicts) misses the
cache, while an unchanged slice keeps its results across pods and scheduling cycles. Device dicts
must be treated as immutable, as informer objects are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from draplane.dra.cel.compile import CELRuntimeError, CompilationResult, Compiler, DeviceInput


class CELCompileError(Exception):
    """A stored selector that does not compile (e.g. written by a newer server)."""


_shared: SelectorCache | None = None


class _Entry:
    __slots__ = ("all_results", "device", "driver", "input", "results")

    def __init__(self, device: Mapping[str, Any], driver: str) -> None:
        self.device = device
        self.driver = driver
        self.input: DeviceInput | None = None
        self.results: dict[str, bool | CELRuntimeError] = {}
        self.all_results: dict[tuple[str, ...], bool] = {}


class SelectorCache:
    """Compiled programs plus per-device selector results; one per scheduler, long-lived."""

    def __init__(self, compiler: Compiler | None = None, *, max_devices: int = 100_000) -> None:
        self.compiler = compiler or Compiler()
        self.max_devices = max_devices
        self._devices: dict[int, _Entry] = {}
        self.evaluations = 0

    @classmethod
    def shared(cls) -> SelectorCache:
        """The process-wide cache used when a caller passes none."""
        global _shared
        if _shared is None:
            _shared = cls()
        return _shared

    def compiled(self, expression: str) -> CompilationResult:
        return self.compiler.get_or_compile(expression)

    def _entry(self, driver: str, device: Mapping[str, Any]) -> _Entry:
        entry = self._devices.get(id(device))
        if entry is None or entry.device is not device or entry.driver != driver:
            if len(self._devices) >= self.max_devices:
                self._devices.clear()
            entry = _Entry(device, driver)
            self._devices[id(device)] = entry
        return entry

    def cached_all(
        self, expressions: tuple[str, ...], driver: str, device: Mapping[str, Any]
    ) -> bool | None:
        """The remembered conjunction of `expressions` on `device`, None when not known yet."""
        return self._entry(driver, device).all_results.get(expressions)

    def remember_all(
        self, expressions: tuple[str, ...], driver: str, device: Mapping[str, Any], value: bool
    ) -> None:
        self._entry(driver, device).all_results[expressions] = value

    def matches(self, expression: str, driver: str, device: Mapping[str, Any]) -> bool:
        """Whether `device` (a v1 Device dict of a slice of `driver`) satisfies `expression`.

        Raises CELCompileError or CELRuntimeError; both abort allocation upstream.
        """
        entry = self._entry(driver, device)
        hit = entry.results.get(expression)
        if hit is None:
            compiled = self.compiler.get_or_compile(expression)
            if compiled.error is not None:
                raise CELCompileError(compiled.error)
            if entry.input is None:
                entry.input = DeviceInput(
                    driver, device, allow_multiple=bool(device.get("allowMultipleAllocations"))
                )
            self.evaluations += 1
            try:
                hit = compiled.device_matches(entry.input)
            except CELRuntimeError as e:
                hit = e
            entry.results[expression] = hit
        if isinstance(hit, CELRuntimeError):
            raise hit
        return hit
