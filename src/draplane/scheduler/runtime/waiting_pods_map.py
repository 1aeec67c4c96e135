"""Pods waiting at Permit (kube-scheduler's waiting_pods_map.go).

One `WaitingPodState` per pod and attempt, with one timer per plugin that asked the pod to
wait. A timer runs on the injected clock and rejects the pod when it expires; every timer is
stopped when the pod is allowed by all its plugins, rejected, or removed. The map holds the
current attempt's object by pod UID, so a late timer of an earlier attempt cannot touch a
later one: it belongs to an object that is no longer waited for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

from draplane.api.meta import Obj
from draplane.clock import Clock
from draplane.scheduler.framework.handle import WaitingPod
from draplane.scheduler.framework.status import SUCCESS, Status

MAX_TIMEOUT_SECONDS = 15 * 60.0
"""The longest a Permit plugin may make a pod wait (longer requests are cut to this)."""


class WaitingPodState:
    """One waiting pod: its pending plugins' timers and the final status, once decided."""

    def __init__(self, pod: Obj, plugins_max_wait: Mapping[str, float], *, clock: Clock) -> None:
        self._pod = pod
        self._clock = clock
        self._decided: asyncio.Future[Status] = asyncio.get_running_loop().create_future()
        self._pending: dict[str, asyncio.Task[None]] = {
            plugin: asyncio.create_task(self._timer(plugin, wait), name=f"permit-{plugin}")
            for plugin, wait in plugins_max_wait.items()
        }

    @property
    def pod(self) -> Obj:
        return self._pod

    @property
    def uid(self) -> str:
        return str((self._pod.get("metadata") or {}).get("uid") or "")

    def get_pending_plugins(self) -> list[str]:
        return list(self._pending)

    async def _timer(self, plugin: str, wait: float) -> None:
        await self._clock.sleep(wait)
        # This timer has fired: only the others are left to stop.
        self._pending.pop(plugin, None)
        self.reject(
            plugin, f"rejected due to timeout after waiting {go_duration(wait)} at plugin {plugin}"
        )

    def allow(self, plugin_name: str) -> None:
        timer = self._pending.pop(plugin_name, None)
        if timer is not None:
            timer.cancel()
        if not self._pending and not self._decided.done():
            self._decided.set_result(SUCCESS)

    def reject(self, plugin_name: str, message: str) -> None:
        self.stop_timers()
        if not self._decided.done():
            self._decided.set_result(Status.unschedulable(message).with_plugin(plugin_name))

    def stop_timers(self) -> None:
        for timer in self._pending.values():
            timer.cancel()

    async def wait(self) -> Status:
        """The status once every pending plugin allowed the pod, or its rejection."""
        return await asyncio.shield(self._decided)


class WaitingPodsMap:
    """The waiting pods of one framework by pod UID (implements the handle's WaitingPods)."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPodState] = {}

    def add(self, waiting: WaitingPodState) -> None:
        previous = self._pods.get(waiting.uid)
        if previous is not None:
            previous.reject("", "replaced by a new attempt")
        self._pods[waiting.uid] = waiting

    def remove(self, waiting: WaitingPodState) -> None:
        """Forget `waiting` (and only it: a newer attempt of the same pod stays)."""
        if self._pods.get(waiting.uid) is waiting:
            del self._pods[waiting.uid]

    def get(self, uid: str) -> WaitingPod | None:
        return self._pods.get(uid)

    def state(self, uid: str) -> WaitingPodState | None:
        return self._pods.get(uid)

    def iterate(self, callback: Callable[[WaitingPod], None]) -> None:
        for waiting in list(self._pods.values()):
            callback(waiting)

    def stop(self) -> None:
        """Stop every timer (the scheduler shuts down; nobody waits any more)."""
        for waiting in self._pods.values():
            waiting.stop_timers()
        self._pods.clear()


def go_duration(seconds: float) -> str:
    """`seconds` as Go's time.Duration prints it: 200ms, 5s, 1m0s, 1h2m3.5s."""
    ns = round(seconds * 1e9)
    if ns == 0:
        return "0s"
    sign, ns = ("-", -ns) if ns < 0 else ("", ns)
    if ns < 1_000:
        return f"{sign}{ns}ns"
    if ns < 1_000_000:
        return f"{sign}{_decimal(ns, 1_000)}µs"
    if ns < 1_000_000_000:
        return f"{sign}{_decimal(ns, 1_000_000)}ms"
    hours, rest = divmod(ns, 3600 * 10**9)
    minutes, rest = divmod(rest, 60 * 10**9)
    text = f"{_decimal(rest, 10**9)}s"
    if hours:
        return f"{sign}{hours}h{minutes}m{text}"
    if minutes:
        return f"{sign}{minutes}m{text}"
    return sign + text


def _decimal(value: int, unit: int) -> str:
    whole, fraction = divmod(value, unit)
    if not fraction:
        return str(whole)
    digits = len(str(unit)) - 1
    return f"{whole}.{fraction:0{digits}d}".rstrip("0")
