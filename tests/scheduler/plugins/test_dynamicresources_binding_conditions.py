"""Structured DynamicResources PreBind with device binding conditions (DRADeviceBindingConditions
and DRAResourceClaimDeviceStatus on, as in 1.36): the allocation gets `allocationTimestamp`, the
pod a `BindingConditionsPending` event, and PreBind waits on the (fake) clock, every 5 s, until
the device's binding conditions are True in the claim's `status.devices`; a True failure
condition fails it, and so does `bindingTimeout` passing after the allocation."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest

from draplane.api.meta import Obj, deep_copy
from draplane.client.interface import Client
from draplane.dra.resourcev1 import DEVICE_CLASSES, RESOURCE_CLAIMS_V1, RESOURCE_SLICES
from draplane.scheduler.framework import SUCCESS, CycleState, Handle, Status
from draplane.scheduler.plugins.dynamicresources import StructuredDynamicResources
from draplane.scheduler.plugins.dynamicresources.args import DynamicResourcesArgs
from draplane.testing.apiobjects import StaticLister
from draplane.testing.apistate import wait_for
from draplane.testing.builders import make_node, make_pod
from draplane.testing.claimstore import ClaimStore, node_infos, pod_info
from draplane.testing.clock import FakeClock
from draplane.testing.structured import (
    make_device_class,
    make_resource_slice,
    make_structured_claim,
)

DRIVER = "driver.example.com"
TIMEOUT = 60.0
CLAIM = make_structured_claim("claim").uid("claim-uid").request("gpu", "gpu").obj()
POD = make_pod("pod").uid("pod-uid").obj()
POD["spec"]["resourceClaims"] = [{"name": "c0", "resourceClaimName": "claim"}]
ATTACHING = {
    "name": "dev-0",
    "bindingConditions": ["Attached"],
    "bindingFailureConditions": ["AttachFailed"],
}


@dataclass
class Events:
    recorded: list[tuple[str, str, str, str]] = field(default_factory=list)

    def event(self, obj: Obj, type_: str, reason: str, message: str) -> None:
        self.recorded.append((obj["metadata"]["name"], type_, reason, message))


@dataclass
class Env:
    plugin: StructuredDynamicResources
    store: ClaimStore
    clock: FakeClock
    events: Events

    def condition(self, type_: str, status: str = "True") -> None:
        """The driver reports a condition of the allocated device; the informer sees it."""
        stored = deep_copy(self.store.stored[("default", "claim")])
        stored["metadata"]["resourceVersion"] = str(int(stored["metadata"]["resourceVersion"]) + 1)
        condition = {"type": type_, "status": status, "reason": "Driver", "message": "attach"}
        stored["status"]["devices"] = [
            {"driver": DRIVER, "pool": "node-a", "device": "dev-0", "conditions": [condition]}
        ]
        self.store.stored[("default", "claim")] = stored
        self.store.sync()


def _env(device: Obj | str) -> Env:
    store, clock, events = ClaimStore([CLAIM]), FakeClock(), Events()
    slices = [make_resource_slice("a", DRIVER, "node-a").node("node-a").device(device).obj()]
    listers = {
        RESOURCE_CLAIMS_V1: store,
        DEVICE_CLASSES: StaticLister([make_device_class("gpu", DRIVER).obj()]),
        RESOURCE_SLICES: StaticLister(slices),
    }
    handle = Handle(
        Client(store),
        listers,
        event_sources={RESOURCE_CLAIMS_V1: store},
        clock=clock,
        event_recorder=events,
    )
    args = DynamicResourcesArgs(binding_timeout=TIMEOUT)
    return Env(StructuredDynamicResources(handle, args=args), store, clock, events)


async def _pre_bind(env: Env) -> asyncio.Task[Status]:
    state, info = CycleState(), pod_info(POD)
    assert env.plugin.pre_filter(state, info).is_success
    [node] = node_infos(make_node("node-a").obj())
    assert env.plugin.filter(state, info, node) == SUCCESS
    assert await env.plugin.reserve(state, info, "node-a") == SUCCESS
    return asyncio.create_task(env.plugin.pre_bind(state, info, "node-a"))


PENDING = (
    "pod",
    "Normal",
    "BindingConditionsPending",
    "waiting for binding conditions for device on node node-a",
)


@pytest.mark.parametrize(
    ("report", "seconds", "expected"),
    [
        pytest.param(("Attached", "True"), 5.0, SUCCESS, id="binding-condition-true"),
        pytest.param(
            ("AttachFailed", "True"),
            5.0,
            Status.error('claim claim binding failed: reason=Driver, message="attach"'),
            id="failure-condition-true",
        ),
        pytest.param(
            ("Attached", "False"),
            TIMEOUT + 5.0,
            Status.error("claim claim binding timeout"),
            id="binding-timeout",
        ),
    ],
)
async def test_pre_bind_waits_for_binding_conditions(
    report: tuple[str, str], seconds: float, expected: Status
) -> None:
    env = _env(ATTACHING)
    task = await _pre_bind(env)
    await wait_for(lambda: env.clock.sleepers == 1, what="PreBind polling")
    stored = env.store.stored[("default", "claim")]
    assert stored["status"]["allocation"]["allocationTimestamp"] == "2026-01-01T00:00:00Z"
    assert stored["status"]["reservedFor"] == [
        {"resource": "pods", "name": "pod", "uid": "pod-uid"}
    ]
    assert env.events.recorded == [PENDING]
    assert not task.done()

    env.condition(*report)
    for _ in range(int(seconds // 5.0)):
        await wait_for(lambda: env.clock.sleepers == 1 or task.done(), what="PreBind polling")
        env.clock.step(5.0)

    assert await asyncio.wait_for(task, 5.0) == expected


async def test_pre_bind_without_binding_conditions_does_not_wait() -> None:
    env = _env("dev-0")
    task = await _pre_bind(env)

    assert await asyncio.wait_for(task, 5.0) == SUCCESS
    assert (
        "allocationTimestamp" not in env.store.stored[("default", "claim")]["status"]["allocation"]
    )
    assert env.events.recorded == []


async def _attempt(env: Env) -> tuple[CycleState, Status]:
    """The pod's next scheduling attempt up to Filter on node-a."""
    state, info = CycleState(), pod_info(POD)
    assert env.plugin.pre_filter(state, info).is_success
    [node] = node_infos(make_node("node-a").obj())
    return state, env.plugin.filter(state, info, node)


@pytest.mark.parametrize(
    ("report", "seconds"),
    [
        pytest.param(("AttachFailed", "True"), 5.0, id="failure-condition-true"),
        pytest.param(("Attached", "False"), TIMEOUT + 5.0, id="binding-timeout"),
    ],
)
async def test_next_attempt_deallocates_a_claim_whose_binding_failed(
    report: tuple[str, str], seconds: float
) -> None:
    env = _env(ATTACHING)
    task = await _pre_bind(env)
    await wait_for(lambda: env.clock.sleepers == 1, what="PreBind polling")
    env.condition(*report)
    for _ in range(int(seconds // 5.0)):
        await wait_for(lambda: env.clock.sleepers == 1 or task.done(), what="PreBind polling")
        env.clock.step(5.0)
    assert not (await asyncio.wait_for(task, 5.0)).is_success

    state, filtered = await _attempt(env)
    assert filtered == Status.unresolvable("resourceclaim not available on the node")
    result = await env.plugin.post_filter(state, pod_info(POD), {"node-a": filtered})

    assert result == Status.unschedulable("deallocation of ResourceClaim completed")
    status = env.store.stored[("default", "claim")]["status"]
    assert {"allocation", "reservedFor", "devices"} & set(status) == set()


async def test_next_attempt_keeps_a_claim_still_waiting_for_its_conditions() -> None:
    env = _env(ATTACHING)
    task = await _pre_bind(env)
    await wait_for(lambda: env.clock.sleepers == 1, what="PreBind polling")
    env.condition("Attached", "False")

    _, filtered = await _attempt(env)

    assert filtered == SUCCESS
    assert env.store.stored[("default", "claim")]["status"]["allocation"]
    task.cancel()
