"""One replay with its measurements: a fresh control plane (`whatif.plane_config`, with the
scheduler setting asked for), the recording played into it (`player.play`) while a pod watch
notes when each pod appeared and was bound (seconds of replay wall time) and pending pods are
sampled (on the recording's time scale), then a wait until scheduling settles. The
`ReplayResult` also holds the final bound pods and per-pool utilisation; it is saved as JSON
and compared by `compare.py`.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from draplane.api import meta
from draplane.api.kinds import PODS
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.controlplane import ControlPlane
from draplane.replay.player import play
from draplane.replay.recording import Event, RecordingError
from draplane.whatif import plane_config, pool_usage, read_state
from draplane.whatif.simulate import is_pending, wait_settled

SAMPLE_SECONDS = 0.1


def stable_name(pod: Obj) -> str:
    """`ns/name`, or `ns/generateName*` for a pod a controller named."""
    generate = str(meta.metadata(pod).get("generateName") or "")
    if generate and meta.name(pod).startswith(generate):
        return f"{meta.namespace(pod)}/{generate}*"
    return meta.namespaced_key(pod)


@dataclass
class ReplayResult:
    settings: dict[str, Any]
    appeared: dict[str, float] = field(default_factory=dict)
    bound: dict[str, float] = field(default_factory=dict)
    nodes: dict[str, str] = field(default_factory=dict)
    """Pod -> node it ended bound to."""
    bound_pods: dict[str, int] = field(default_factory=dict)
    """How many pods ended bound, by name (`generateName*` for generated names, which differ
    from one replay to the next)."""
    pending: list[tuple[float, int]] = field(default_factory=list)
    """(recording seconds, pods pending)."""
    pools: dict[str, dict[str, Any]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    settled: bool = True

    def times_to_schedule(self) -> list[float]:
        return sorted(self.bound[p] - self.appeared[p] for p in self.bound if p in self.appeared)

    def summary(self) -> dict[str, Any]:
        times = self.times_to_schedule()

        def pct(q: float) -> float | None:
            if not times:
                return None
            return round(times[min(len(times) - 1, int(q * len(times)))], 3)

        return {
            "pods": len(self.appeared),
            "bound": len(self.nodes),
            "meanTimeToSchedule": round(statistics.fmean(times), 3) if times else None,
            "p50TimeToSchedule": pct(0.5),
            "p95TimeToSchedule": pct(0.95),
            "maxTimeToSchedule": pct(1.0),
            "maxPending": max((n for _, n in self.pending), default=0),
            "finalPending": self.pending[-1][1] if self.pending else 0,
            "devicesAllocated": sum(p["allocated"] for p in self.pools.values()),
            "devices": sum(p["devices"] for p in self.pools.values()),
        }

    def json(self) -> dict[str, Any]:
        return {
            "settings": self.settings,
            "summary": self.summary(),
            "settled": self.settled,
            "appeared": self.appeared,
            "bound": self.bound,
            "nodes": self.nodes,
            "boundPods": self.bound_pods,
            "pending": self.pending,
            "pools": self.pools,
            "errors": self.errors,
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> ReplayResult:
        return cls(
            settings=doc["settings"],
            appeared=doc["appeared"],
            bound=doc["bound"],
            nodes=doc["nodes"],
            bound_pods=doc["boundPods"],
            pending=[(float(t), int(n)) for t, n in doc["pending"]],
            pools=doc["pools"],
            errors=doc.get("errors") or [],
            settled=bool(doc.get("settled", True)),
        )

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.json(), indent=1) + "\n")


def load_result(path: Path) -> ReplayResult:
    try:
        return ReplayResult.from_json(json.loads(path.read_text()))
    except OSError as err:
        raise RecordingError(f"cannot read {path}: {err.strerror or err}") from err
    except (ValueError, KeyError, TypeError) as err:
        raise RecordingError(f"{path} is not a replay result (`replay --result`)") from err


async def _watch_pods(client: Client, result: ReplayResult, started: float) -> None:
    """When each pod appeared and when it was first seen bound (a watch from the start)."""
    stream = await client.watch(PODS)
    try:
        async for event in stream:
            key = meta.namespaced_key(event.object)
            now = time.monotonic() - started
            result.appeared.setdefault(key, now)
            if meta.node_name(event.object):
                result.bound.setdefault(key, now)
    finally:
        await stream.close()


async def _sample(client: Client, result: ReplayResult, started: float, speed: float) -> None:
    """Every `SAMPLE_SECONDS`: how many pods are pending."""
    while True:
        now = time.monotonic() - started
        pods = (await client.list(PODS)).get("items") or []
        result.pending.append((round(now * speed, 3), sum(1 for p in pods if is_pending(p))))
        await asyncio.sleep(SAMPLE_SECONDS)


async def replay(
    events: list[Event], *, speed: float = 1.0, queueing_hints: bool = True, timeout: float = 300
) -> ReplayResult:
    """Replay `events` into a fresh control plane and measure it."""
    result = ReplayResult(settings={"speed": speed, "queueingHints": queueing_hints})
    plane = ControlPlane(plane_config(queueing_hints=queueing_hints))
    await plane.start()
    try:
        client = plane.client()
        started = time.monotonic()
        tasks = [
            asyncio.create_task(_watch_pods(client, result, started)),
            asyncio.create_task(_sample(client, result, started, speed)),
        ]
        try:
            player = await play(client, events, speed=speed)
            result.settled = await wait_settled(plane, timeout=timeout, settle=1.0)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        result.errors = player.errors
        final = await read_state(client)
        for pod in final.kind(PODS).values():
            if meta.node_name(pod):
                result.nodes[meta.namespaced_key(pod)] = meta.node_name(pod)
                name = stable_name(pod)
                result.bound_pods[name] = result.bound_pods.get(name, 0) + 1
        result.pools = {f"{d}/{p}": u.json() for (d, p), u in pool_usage(final).items()}
        return result
    finally:
        await plane.stop()
