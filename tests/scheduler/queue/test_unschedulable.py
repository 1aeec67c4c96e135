"""The indexed unschedulable pool: an event whose hints declare PodSelectors asks only the pods
indexed under its key; the queue's outcome is the same as asking every pod."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from draplane.api.meta import Obj
from draplane.scheduler.framework import (
    GVK,
    ActionType,
    ClusterEvent,
    PodInfo,
    PodSelector,
    QueuedPodInfo,
    QueueingHint,
    Status,
)
from draplane.scheduler.plugins.queuesort import PrioritySort
from draplane.scheduler.queue import SchedulingQueue
from draplane.scheduler.queue.unschedulable import UnschedulablePods
from draplane.testing.builders import from_pod, make_claim, make_pod
from draplane.testing.clock import FakeClock

CLAIM_UPDATE = ClusterEvent(GVK.RESOURCE_CLAIM, ActionType.UPDATE, "ResourceClaimUpdate")
NODE_ADD = ClusterEvent(GVK.NODE, ActionType.ADD, "NodeAdd")
WILDCARD = ClusterEvent(GVK.WILDCARD, ActionType.ALL, "UnschedulableTimeout")


def _labels_key(pod: Obj) -> list[str]:
    claim = (pod["metadata"].get("labels") or {}).get("claim")
    return [f"default/{claim}"] if claim else []


def _event_key(old: Any, new: Any) -> str | None:
    if not isinstance(new, dict):
        return None
    return f"{new['metadata'].get('namespace', '')}/{new['metadata']['name']}"


SELECTOR = PodSelector(pod_keys=_labels_key, event_key=_event_key)


def _qpi(
    name: str, *, claim: str = "", plugins: frozenset[str] = frozenset({"Claims"})
) -> QueuedPodInfo:
    builder = make_pod(name)
    if claim:
        builder = builder.label("claim", claim)
    qpi = QueuedPodInfo(PodInfo(builder.obj()), timestamp=0.0)
    qpi.unschedulable_plugins = set(plugins)
    return qpi


def _names(qpis: list[QueuedPodInfo]) -> list[str]:
    return [q.pod_info.name for q in qpis]


def _pool(*qpis: QueuedPodInfo) -> UnschedulablePods:
    pool = UnschedulablePods({GVK.RESOURCE_CLAIM: [SELECTOR]})
    for qpi in qpis:
        pool.put(qpi)
    return pool


@pytest.mark.parametrize(
    ("event", "new", "want"),
    [
        pytest.param(CLAIM_UPDATE, make_claim("c1").obj(), ["a", "c"], id="pods-naming-the-claim"),
        pytest.param(CLAIM_UPDATE, make_claim("nobody").obj(), [], id="claim-nobody-names"),
        pytest.param(
            CLAIM_UPDATE, "not-a-claim", ["a", "b", "c", "d"], id="unkeyed-event-asks-all"
        ),
        pytest.param(NODE_ADD, {"metadata": {"name": "n"}}, ["a", "b", "c", "d"], id="no-selector"),
        pytest.param(WILDCARD, None, ["a", "b", "c", "d"], id="wildcard"),
    ],
)
def test_candidates_are_the_pods_under_the_event_key(
    event: ClusterEvent, new: Any, want: list[str]
) -> None:
    pool = _pool(_qpi("a", claim="c1"), _qpi("b", claim="c2"), _qpi("c", claim="c1"), _qpi("d"))

    assert _names(pool.candidates(event, None, new)) == want


def test_pods_without_rejecting_plugins_are_always_candidates() -> None:
    pool = _pool(_qpi("a", claim="c1"), _qpi("b", plugins=frozenset()))

    assert _names(pool.candidates(CLAIM_UPDATE, None, make_claim("other").obj())) == ["b"]


def test_put_reindexes_and_pop_unindexes() -> None:
    qpi = _qpi("a", claim="c1")
    pool = _pool(qpi, _qpi("b", claim="c2"))

    qpi.pod_info = PodInfo(from_pod(qpi.pod).label("claim", "c2").obj())
    pool.put(qpi)
    popped = pool.pop("default/b")

    assert popped is not None and popped.pod_info.name == "b"
    assert _names(pool.candidates(CLAIM_UPDATE, None, make_claim("c1").obj())) == []
    assert _names(pool.candidates(CLAIM_UPDATE, None, make_claim("c2").obj())) == ["a"]
    assert (len(pool), "default/a" in pool, "default/b" in pool) == (1, True, False)


def _queue(asked: list[str], *, hints: bool, gate: frozenset[str] = frozenset()) -> SchedulingQueue:
    def claim_hint(pod: Obj, old: Any, new: Any) -> QueueingHint:
        asked.append(f"{pod['metadata']['name']}:{new['metadata']['name']}")
        return QueueingHint.QUEUE_IMMEDIATELY

    def pre_enqueue(pod: Obj) -> Status:
        if pod["metadata"]["name"] in gate:
            return Status.unresolvable("claim not found").with_plugin("Claims")
        return Status()

    return SchedulingQueue(
        less=PrioritySort().less,
        hint_map={ClusterEvent(GVK.RESOURCE_CLAIM, ActionType.ADD | ActionType.UPDATE): [
            ("Claims", claim_hint)
        ]},
        selectors={GVK.RESOURCE_CLAIM: [SELECTOR]},
        pre_enqueue=pre_enqueue,
        queueing_hints=hints,
        clock=FakeClock(),
    )  # fmt: skip


async def _park(queue: SchedulingQueue, pod: Obj) -> None:
    queue.add(pod)
    qpi = await asyncio.wait_for(queue.pop(), timeout=1)
    qpi.unschedulable_plugins = {"Claims"}
    queue.add_unschedulable_if_not_present(qpi, queue.scheduling_cycle)
    queue.done(qpi.pod_info.uid)


@pytest.mark.parametrize(
    ("hints", "want_asked", "want_moved"),
    [
        pytest.param(True, ["a:c1"], ["a"], id="hints-ask-only-the-selected-pod"),
        pytest.param(False, [], ["a", "b"], id="hints-off-move-every-rejected-pod"),
    ],
)
async def test_claim_event_routing(
    hints: bool, want_asked: list[str], want_moved: list[str]
) -> None:
    asked: list[str] = []
    queue = _queue(asked, hints=hints)
    await _park(queue, make_pod("a").label("claim", "c1").obj())
    await _park(queue, make_pod("b").label("claim", "c2").obj())

    queue.move_all_to_active_or_backoff(CLAIM_UPDATE, None, make_claim("c1").obj())

    assert asked == want_asked
    moved = [n for n in ("a", "b") if queue.where(f"default/{n}") in ("active", "backoff")]
    assert moved == want_moved


async def test_update_of_a_gated_pod_reindexes_it() -> None:
    asked: list[str] = []
    queue = _queue(asked, hints=True, gate=frozenset({"a"}))
    pod = make_pod("a").label("claim", "c1").obj()
    queue.add(pod)

    # PreEnqueue still rejects the updated pod: it stays in the pool under its new key.
    queue.update(pod, from_pod(pod).label("claim", "c2").obj())
    queue.move_all_to_active_or_backoff(CLAIM_UPDATE, None, make_claim("c1").obj())
    queue.move_all_to_active_or_backoff(CLAIM_UPDATE, None, make_claim("c2").obj())

    assert asked == ["a:c2"]
    assert queue.where("default/a") == "gated"
