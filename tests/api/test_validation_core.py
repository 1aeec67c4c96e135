"""Validation of Node, Namespace, Event, ConfigMap and Lease."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from draplane.api import kinds
from draplane.api.errors import FieldError
from draplane.api.meta import Obj
from draplane.testing import kindrules as validation
from draplane.testing.builders import make_node

REQ, INV, DUP, FORB = (
    "FieldValueRequired",
    "FieldValueInvalid",
    "FieldValueDuplicate",
    "FieldValueForbidden",
)
NOT_SUP, TOO_LONG, TYPE = "FieldValueNotSupported", "FieldValueTooLong", "FieldValueTypeInvalid"


def _causes(errs: list[FieldError]) -> list[tuple[str, str]]:
    return [(e.type, e.field) for e in errs]


@pytest.mark.parametrize(
    ("node", "causes"),
    [
        pytest.param(make_node().obj(), [], id="valid"),
        pytest.param(make_node().taint("gpu", "NoSchedule", "true").obj(), [], id="taint"),
        pytest.param(
            make_node().taint("a/b/c", "NoSchedule").obj(),
            [(INV, "spec.taints[0].key")],
            id="taint-key",
        ),
        pytest.param(
            make_node().taint("k", "Never").obj(),
            [(NOT_SUP, "spec.taints[0].effect")],
            id="taint-effect",
        ),
        pytest.param(
            make_node().taint("k", "").obj(),
            [(REQ, "spec.taints[0].effect")],
            id="taint-effect-required",
        ),
        pytest.param(
            make_node().taint("k", "NoSchedule", "-x").obj(),
            [(INV, "spec.taints[0].value")],
            id="taint-value",
        ),
        pytest.param(
            make_node().taint("k", "NoSchedule").taint("k", "NoSchedule", "v").obj(),
            [(DUP, "spec.taints[1]")],
            id="taint-duplicate",
        ),
        pytest.param(
            make_node().capacity(cpu="four").obj(),
            [(INV, "status.capacity.cpu"), (INV, "status.allocatable.cpu")],
            id="capacity-quantity",
        ),
        pytest.param(
            make_node().capacity(memory="-1").obj(),
            [(INV, "status.capacity.memory"), (INV, "status.allocatable.memory")],
            id="capacity-negative",
        ),
        pytest.param(
            make_node().set("status.capacity", {"example.com/gpu": "0.5"}).obj(),
            [(INV, "status.capacity.example.com/gpu")],
            id="extended-capacity-integer",
        ),
        pytest.param(
            make_node()
            .set("status.addresses", [{"type": "InternalIP", "address": "10.0.0.1"}] * 2)
            .obj(),
            [(DUP, "status.addresses[1]")],
            id="duplicate-address",
        ),
    ],
)
def test_validate_node(node: Obj, causes: list[tuple[str, str]]) -> None:
    validation.default(kinds.NODES, node)
    assert _causes(validation.validate_create(kinds.NODES, node)) == causes
    assert _causes(validation.validate_status_update(kinds.NODES, node, node)) == causes


def test_node_provider_id_and_pod_cidrs_are_set_once() -> None:
    old = make_node().set("spec.providerID", "sim://a").set("spec.podCIDRs", ["10.0.0.0/24"]).obj()
    new = make_node().set("spec.providerID", "sim://b").set("spec.podCIDRs", ["10.1.0.0/24"]).obj()
    new["metadata"] = old["metadata"]
    assert _causes(validation.validate_update(kinds.NODES, new, old)) == [
        (FORB, "spec.podCIDRs"),
        (FORB, "spec.providerID"),
    ]
    unset = make_node().obj()
    assert validation.validate_update(kinds.NODES, old, unset | {"metadata": old["metadata"]}) == []


@pytest.mark.parametrize(
    ("namespace", "causes"),
    [
        pytest.param({"metadata": {"name": "team-a"}}, [], id="valid"),
        pytest.param({"metadata": {"name": "Team"}}, [(INV, "metadata.name")], id="name"),
        pytest.param(
            {"metadata": {"name": "a"}, "spec": {"finalizers": ["custom"]}},
            [(INV, "spec.finalizers")],
            id="finalizer",
        ),
    ],
)
def test_validate_namespace(namespace: Obj, causes: list[tuple[str, str]]) -> None:
    validation.default(kinds.NAMESPACES, namespace)
    assert _causes(validation.validate_create(kinds.NAMESPACES, namespace)) == causes


@pytest.mark.parametrize(
    ("deleting", "phase", "causes"),
    [
        pytest.param(False, "Active", [], id="active"),
        pytest.param(False, "Terminating", [(FORB, "status.phase")], id="terminating-early"),
        pytest.param(True, "Terminating", [], id="terminating"),
        pytest.param(True, "Active", [(FORB, "status.phase")], id="active-while-deleting"),
    ],
)
def test_namespace_status_phase(deleting: bool, phase: str, causes: list[tuple[str, str]]):
    md: Obj = {"name": "a"}
    if deleting:
        md["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    ns = {"metadata": md, "status": {"phase": phase}}
    assert _causes(validation.validate_status_update(kinds.NAMESPACES, ns, ns)) == causes


def _event(**fields: Any) -> Obj:
    event: Obj = {
        "metadata": {"name": "web.1", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "web", "namespace": "default"},
        "reason": "Scheduled",
        "message": "ok",
        "type": "Normal",
    }
    event.update(fields)
    return event


@pytest.mark.parametrize(
    ("event", "causes"),
    [
        pytest.param(_event(), [], id="valid"),
        pytest.param(_event(involvedObject=None), [(REQ, "involvedObject")], id="involved-req"),
        pytest.param(
            _event(involvedObject={"kind": "Pod", "name": "web", "namespace": "other"}),
            [(INV, "involvedObject.namespace")],
            id="namespace-mismatch",
        ),
        pytest.param(
            _event(involvedObject={"kind": "Node", "name": "n"}), [], id="cluster-object-default"
        ),
        pytest.param(
            _event(
                metadata={"name": "e", "namespace": "team"},
                involvedObject={"kind": "Node", "name": "n"},
            ),
            [(INV, "involvedObject.namespace")],
            id="cluster-object-other-namespace",
        ),
        pytest.param(
            _event(eventTime="2026-01-01T00:00:00.000000Z"),
            [
                (REQ, "reportingController"),
                (INV, "reportingController"),
                (REQ, "reportingInstance"),
                (REQ, "action"),
            ],
            id="new-style-requires-reporting",
        ),
        pytest.param(
            _event(
                eventTime="2026-01-01T00:00:00.000000Z",
                reportingComponent="example.com/sched",
                reportingInstance="sched-1",
                action="Binding",
            ),
            [],
            id="new-style-valid",
        ),
        pytest.param(
            _event(metadata={"name": "Bad_Name", "namespace": "default"}),
            [(INV, "metadata.name")],
            id="name",
        ),
    ],
)
def test_validate_event(event: Obj, causes: list[tuple[str, str]]) -> None:
    validation.default(kinds.EVENTS, event)
    assert _causes(validation.validate_create(kinds.EVENTS, event)) == causes


def _cm(**fields: Any) -> Obj:
    return {"metadata": {"name": "cm", "namespace": "default"}, **fields}


@pytest.mark.parametrize(
    ("cm", "causes"),
    [
        pytest.param(_cm(data={"a.b": "1", "C_D": "2"}), [], id="valid"),
        pytest.param(_cm(binaryData={"bin": base64.b64encode(b"xyz").decode()}), [], id="binary"),
        pytest.param(_cm(data={"a/b": "1"}), [(INV, "data[a/b]")], id="bad-key"),
        pytest.param(_cm(data={"..a": "1"}), [(INV, "data[..a]")], id="dot-dot-key"),
        pytest.param(
            _cm(data={"k": "1"}, binaryData={"k": "MQ=="}),
            [(INV, "data[k]"), (INV, "binaryData[k]")],
            id="key-in-both",
        ),
        pytest.param(_cm(data={"k": 1}), [(TYPE, "data[k]")], id="value-not-string"),
        pytest.param(_cm(data={"k": "x" * (1024 * 1024 + 1)}), [(TOO_LONG, "")], id="too-big"),
    ],
)
def test_validate_config_map(cm: Obj, causes: list[tuple[str, str]]) -> None:
    assert _causes(validation.validate_create(kinds.CONFIGMAPS, cm)) == causes


def test_immutable_config_map() -> None:
    old = _cm(data={"a": "1"}, immutable=True)
    assert (
        validation.validate_update(kinds.CONFIGMAPS, _cm(data={"a": "1"}, immutable=True), old)
        == []
    )
    assert _causes(
        validation.validate_update(kinds.CONFIGMAPS, _cm(data={"a": "2"}, immutable=True), old)
    ) == [(FORB, "data")]
    assert _causes(validation.validate_update(kinds.CONFIGMAPS, _cm(data={"a": "1"}), old)) == [
        (FORB, "immutable")
    ]


def _lease(**spec: Any) -> Obj:
    return {"metadata": {"name": "kube-scheduler", "namespace": "kube-system"}, "spec": spec}


@pytest.mark.parametrize(
    ("lease", "causes"),
    [
        pytest.param(
            _lease(
                holderIdentity="host_1234",
                leaseDurationSeconds=15,
                acquireTime="2026-01-01T00:00:00.000000Z",
                renewTime="2026-01-01T00:00:10.123456+02:00",
                leaseTransitions=0,
            ),
            [],
            id="valid",
        ),
        pytest.param(_lease(), [], id="empty-spec"),
        pytest.param(
            _lease(leaseDurationSeconds=0), [(INV, "spec.leaseDurationSeconds")], id="duration"
        ),
        pytest.param(
            _lease(leaseTransitions=-1), [(INV, "spec.leaseTransitions")], id="transitions"
        ),
        pytest.param(
            _lease(leaseDurationSeconds="15"),
            [(TYPE, "spec.leaseDurationSeconds")],
            id="duration-type",
        ),
        pytest.param(_lease(holderIdentity=5), [(TYPE, "spec.holderIdentity")], id="holder-type"),
        pytest.param(_lease(renewTime="yesterday"), [(TYPE, "spec.renewTime")], id="time-format"),
    ],
)
def test_validate_lease(lease: Obj, causes: list[tuple[str, str]]) -> None:
    assert _causes(validation.validate_create(kinds.LEASES, lease)) == causes
    assert _causes(validation.validate_update(kinds.LEASES, lease, lease)) == causes
