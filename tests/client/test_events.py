"""EventRecorder against a real in-process API: new Events, correlation of repeats, write
failures that are logged and not raised."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api.errors import StatusError
from draplane.api.kinds import EVENTS, NODES, PODS
from draplane.api.meta import Obj
from draplane.client.events import NORMAL, WARNING, EventRecorder
from draplane.testing.builders import make_node, make_pod
from draplane.testing.clock import FakeClock
from draplane.testing.cluster import Cluster


async def events(cluster: Cluster, namespace: str = "default") -> list[Obj]:
    items: list[Obj] = (await cluster.client().list(EVENTS, namespace))["items"]
    return sorted(items, key=lambda e: e["metadata"]["name"])


async def test_event_creates_core_v1_event(cluster: Cluster) -> None:
    client = cluster.client()
    pod = await client.create(PODS, make_pod("web").obj(), "default")
    clock = FakeClock()
    recorder = EventRecorder(client, "resource-claim-controller", host="cp-0", clock=clock)
    recorder.event(pod, WARNING, "FailedResourceClaimCreation", "template missing")
    await recorder.flush()
    [event] = await events(cluster)
    assert event["metadata"]["name"].startswith("web.")
    assert event["involvedObject"] == {
        "kind": "Pod",
        "namespace": "default",
        "name": "web",
        "uid": pod["metadata"]["uid"],
        "apiVersion": "v1",
        "resourceVersion": pod["metadata"]["resourceVersion"],
    }
    assert (event["type"], event["reason"], event["message"], event["count"]) == (
        "Warning",
        "FailedResourceClaimCreation",
        "template missing",
        1,
    )
    assert event["source"] == {"component": "resource-claim-controller", "host": "cp-0"}
    assert event["reportingComponent"] == "resource-claim-controller"
    assert event["firstTimestamp"] == event["lastTimestamp"] == "2026-01-01T00:00:00Z"


@pytest.mark.parametrize(
    ("gap", "want_counts"),
    [
        pytest.param(60.0, [3], id="repeats-within-window-patch-count"),
        pytest.param(601.0, [1, 1, 1], id="repeats-after-window-create-new"),
    ],
)
async def test_repeats_are_correlated_within_ten_minutes(
    cluster: Cluster, gap: float, want_counts: list[int]
) -> None:
    client = cluster.client()
    pod = await client.create(PODS, make_pod("web").obj(), "default")
    clock = FakeClock()
    recorder = EventRecorder(client, "scheduler", clock=clock)
    for _ in range(3):
        recorder.event(pod, NORMAL, "Scheduled", "assigned to node-0")
        clock.step(gap)
    await recorder.flush()
    got = await events(cluster)
    assert [e["count"] for e in got] == want_counts
    if len(got) == 1:
        assert got[0]["lastTimestamp"] == "2026-01-01T00:02:00Z"


async def test_different_messages_are_separate_events(cluster: Cluster) -> None:
    client = cluster.client()
    pod = await client.create(PODS, make_pod("web").obj(), "default")
    recorder = EventRecorder(client, "scheduler", clock=FakeClock())
    recorder.event(pod, NORMAL, "Scheduled", "one")
    recorder.event(pod, NORMAL, "Scheduled", "two")
    await recorder.flush()
    assert sorted(e["message"] for e in await events(cluster)) == ["one", "two"]


async def test_cluster_scoped_object_events_go_to_default_namespace(cluster: Cluster) -> None:
    client = cluster.client()
    node = await client.create(NODES, make_node("node-0").obj())
    recorder = EventRecorder(client, "kubelet", clock=FakeClock())
    recorder.event(node, NORMAL, "NodeReady", "ready")
    await recorder.flush()
    [event] = await events(cluster)
    assert event["involvedObject"]["kind"] == "Node"
    assert "namespace" not in event["involvedObject"]


async def test_repeat_of_deleted_event_creates_a_new_one(cluster: Cluster) -> None:
    client = cluster.client()
    pod = await client.create(PODS, make_pod("web").obj(), "default")
    recorder = EventRecorder(client, "scheduler", clock=FakeClock())
    recorder.event(pod, NORMAL, "Scheduled", "x")
    await recorder.flush()
    [first] = await events(cluster)
    await client.delete(EVENTS, first["metadata"]["name"], "default")
    recorder.event(pod, NORMAL, "Scheduled", "x")
    await recorder.flush()
    [second] = await events(cluster)
    assert second["metadata"]["name"] != first["metadata"]["name"]


class FailingClient:
    user = "broken"

    async def create(self, *args: Any, **kwargs: Any) -> Obj:
        raise StatusError(500, "InternalError", "storage down")


async def test_write_errors_are_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    recorder = EventRecorder(FailingClient(), "scheduler", clock=FakeClock())  # type: ignore[arg-type]
    recorder.event(make_pod("web").uid("u").obj(), NORMAL, "Scheduled", "x")
    await recorder.flush()
    assert "storage down" in caplog.text


async def test_events_beyond_the_queue_are_dropped_and_counted(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("draplane.client.events.MAX_QUEUED_EVENTS", 3)
    client = cluster.client()
    pods = [await client.create(PODS, make_pod(f"web-{i}").obj(), "default") for i in range(5)]
    recorder = EventRecorder(client, "scheduler", clock=FakeClock())
    for pod in pods:
        recorder.event(pod, NORMAL, "Scheduled", "assigned to node-0")
    await recorder.flush()

    got = await events(cluster)
    assert [e["involvedObject"]["name"] for e in got] == ["web-0", "web-1", "web-2"]
    assert recorder.dropped == 2
    recorder.event(pods[4], NORMAL, "Scheduled", "assigned to node-1")
    await recorder.flush()
    assert len(await events(cluster)) == 4
