"""resource.k8s.io/v1 validation (the 1.36 mode): DeviceClass, ResourceClaim (spec and status),
ResourceClaimTemplate, ResourceSlice and DeviceTaintRule, one table per kind, every limit at
and past its bound; defaulting; immutability."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from draplane.api import kinds
from draplane.api.errors import FieldError
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.testing import kindrules as validation

REQ, INV, DUP, FORB = (
    "FieldValueRequired",
    "FieldValueInvalid",
    "FieldValueDuplicate",
    "FieldValueForbidden",
)
NOT_SUP, TOO_MANY, TOO_LONG = "FieldValueNotSupported", "FieldValueTooMany", "FieldValueTooLong"
DRIVER = "gpu.example.com"


def _set(obj: Obj, path: str, value: Any) -> Obj:
    """A copy of `obj` with the dotted `path` set (`[i]` indexes lists)."""
    out = copy.deepcopy(obj)
    node: Any = out
    parts = path.replace("]", "").replace("[", ".").split(".")
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    last = parts[-1]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return out


def device_class(name: str = "gpu", **spec: Any) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": spec,
    }


def request(name: str = "r", device_class_name: str = "gpu", **exact: Any) -> Obj:
    return {"name": name, "exactly": {"deviceClassName": device_class_name, **exact}}


def claim(*requests: Obj, **devices: Any) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {"devices": {"requests": list(requests or [request()]), **devices}},
    }


def device(name: str = "d0", **fields: Any) -> Obj:
    return {"name": name, **fields}


def resource_slice(*devices: Obj, **spec: Any) -> Obj:
    fields: dict[str, Any] = {
        "driver": DRIVER,
        "pool": {"name": "node-0", "generation": 0, "resourceSliceCount": 1},
        "nodeName": "node-0",
        "devices": list(devices or [device()]),
    }
    fields.update(spec)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "node-0-gpu"},
        "spec": {k: v for k, v in fields.items() if v is not None},
    }


def _causes(errs: list[FieldError]) -> list[tuple[str, str]]:
    return [(e.type, e.field) for e in errs]


def _create(rt: ResourceType, obj: Obj) -> list[tuple[str, str]]:
    obj = copy.deepcopy(obj)
    validation.default(rt, obj)
    return _causes(validation.validate_create(rt, obj))


CEL = {"cel": {"expression": "device.driver == 'gpu.example.com'"}}
OPAQUE = {"opaque": {"driver": DRIVER, "parameters": {"a": 1}}}


@pytest.mark.parametrize(
    ("obj", "causes"),
    [
        pytest.param(device_class(), [], id="valid-empty"),
        pytest.param(device_class(selectors=[CEL], config=[OPAQUE]), [], id="valid"),
        pytest.param(device_class("Bad_Name"), [(INV, "metadata.name")], id="name"),
        pytest.param(device_class(selectors=[CEL] * 32), [], id="selectors-32"),
        pytest.param(
            device_class(selectors=[CEL] * 33), [(TOO_MANY, "spec.selectors")], id="selectors-33"
        ),
        pytest.param(
            device_class(selectors=[{}]), [(REQ, "spec.selectors[0].cel")], id="selector-no-cel"
        ),
        pytest.param(
            device_class(selectors=[{"cel": {"expression": ""}}]),
            [(REQ, "spec.selectors[0].cel.expression")],
            id="cel-empty",
        ),
        pytest.param(
            device_class(selectors=[{"cel": {"expression": "x" * (10 * 1024 + 1)}}]),
            [(TOO_LONG, "spec.selectors[0].cel.expression")],
            id="cel-10KiB",
        ),
        pytest.param(device_class(config=[OPAQUE] * 32), [], id="config-32"),
        pytest.param(
            device_class(config=[OPAQUE] * 33), [(TOO_MANY, "spec.config")], id="config-33"
        ),
        pytest.param(device_class(config=[{}]), [(REQ, "spec.config[0].opaque")], id="no-opaque"),
        pytest.param(
            device_class(config=[{"opaque": {"driver": "Bad Driver", "parameters": {}}}]),
            [(INV, "spec.config[0].opaque.driver")],
            id="opaque-driver",
        ),
        pytest.param(
            device_class(config=[{"opaque": {"driver": DRIVER, "parameters": [1]}}]),
            [(INV, "spec.config[0].opaque.parameters")],
            id="opaque-not-object",
        ),
        pytest.param(
            device_class(config=[{"opaque": {"driver": DRIVER, "parameters": {"a": "x" * 10240}}}]),
            [(TOO_LONG, "spec.config[0].opaque.parameters")],
            id="opaque-10KiB",
        ),
        pytest.param(
            device_class(extendedResourceName="example.com/gpu"), [], id="extended-resource"
        ),
        pytest.param(
            device_class(extendedResourceName="kubernetes.io/gpu"),
            [(INV, "spec.extendedResourceName")],
            id="extended-resource-kubernetes-io",
        ),
    ],
)
def test_device_class(obj: Obj, causes: list[tuple[str, str]]) -> None:
    assert _create(kinds.DEVICE_CLASSES, obj) == causes


R0 = "spec.devices.requests[0]"


@pytest.mark.parametrize(
    ("obj", "causes"),
    [
        pytest.param(claim(), [], id="valid"),
        pytest.param(claim(request(allocationMode="All")), [], id="all"),
        pytest.param(claim(*(request(f"r{i}") for i in range(32))), [], id="requests-32"),
        pytest.param(
            claim(*(request(f"r{i}") for i in range(33))),
            [(TOO_MANY, "spec.devices.requests")],
            id="requests-33",
        ),
        pytest.param(
            claim(request("r"), request("r")),
            [(DUP, "spec.devices.requests[1].name")],
            id="request-names-unique",
        ),
        pytest.param(claim(request("R_1")), [(INV, f"{R0}.name")], id="request-name-label"),
        pytest.param(claim({"name": "r"}), [(REQ, R0)], id="neither-exactly-nor-first"),
        pytest.param(
            claim({**request(), "firstAvailable": [{"name": "s", "deviceClassName": "gpu"}]}),
            [(INV, R0)],
            id="both-exactly-and-first",
        ),
        pytest.param(
            claim(request(device_class_name="")),
            [(REQ, f"{R0}.exactly.deviceClassName")],
            id="class-required",
        ),
        pytest.param(
            claim(request(device_class_name="Bad_Class")),
            [(INV, f"{R0}.exactly.deviceClassName")],
            id="class-subdomain",
        ),
        pytest.param(
            claim(request(allocationMode="Some")),
            [(NOT_SUP, f"{R0}.exactly.allocationMode")],
            id="allocation-mode",
        ),
        pytest.param(claim(request(count=-1)), [(INV, f"{R0}.exactly.count")], id="count-negative"),
        pytest.param(
            claim(request(allocationMode="All", count=2)),
            [(INV, f"{R0}.exactly.count")],
            id="count-with-all",
        ),
        pytest.param(
            claim(request(selectors=[CEL] * 33)),
            [(TOO_MANY, f"{R0}.exactly.selectors")],
            id="selectors-33",
        ),
        pytest.param(
            claim(request(tolerations=[{"key": "a", "operator": "Exists"}] * 16)),
            [],
            id="tolerations-16",
        ),
        pytest.param(
            claim(request(tolerations=[{"key": "a", "operator": "Exists"}] * 17)),
            [(TOO_MANY, f"{R0}.exactly.tolerations")],
            id="tolerations-17",
        ),
        pytest.param(
            claim(request(tolerations=[{"key": "a", "operator": "Exists", "value": "v"}])),
            [(INV, f"{R0}.exactly.tolerations[0].value")],
            id="toleration-exists-value",
        ),
        pytest.param(
            claim(request(tolerations=[{"key": "a", "operator": "Less"}])),
            [(NOT_SUP, f"{R0}.exactly.tolerations[0].operator")],
            id="toleration-operator",
        ),
        pytest.param(
            claim(request(tolerations=[{"key": "a", "effect": "Never"}])),
            [(NOT_SUP, f"{R0}.exactly.tolerations[0].effect")],
            id="toleration-effect",
        ),
        pytest.param(
            claim(
                {
                    "name": "r",
                    "firstAvailable": [
                        {"name": f"s{i}", "deviceClassName": "gpu"} for i in range(8)
                    ],
                }
            ),
            [],
            id="subrequests-8",
        ),
        pytest.param(
            claim(
                {
                    "name": "r",
                    "firstAvailable": [
                        {"name": f"s{i}", "deviceClassName": "gpu"} for i in range(9)
                    ],
                }
            ),
            [(TOO_MANY, f"{R0}.firstAvailable")],
            id="subrequests-9",
        ),
        pytest.param(
            claim(
                {
                    "name": "r",
                    "firstAvailable": [
                        {"name": "s", "deviceClassName": "gpu", "adminAccess": True}
                    ],
                }
            ),
            [(FORB, f"{R0}.firstAvailable[0].adminAccess")],
            id="subrequest-admin-access",
        ),
        pytest.param(
            claim(constraints=[{"requests": ["r"], "matchAttribute": "gpu.example.com/model"}]),
            [],
            id="constraint",
        ),
        pytest.param(
            claim(constraints=[{"matchAttribute": "model"}]),
            [(REQ, "spec.devices.constraints[0].matchAttribute")],
            id="constraint-needs-domain",
        ),
        pytest.param(
            claim(constraints=[{"requests": ["nope"], "matchAttribute": "a.io/b"}]),
            [(INV, "spec.devices.constraints[0].requests[0]")],
            id="constraint-unknown-request",
        ),
        pytest.param(
            claim(constraints=[{}]),
            [(REQ, "spec.devices.constraints[0].matchAttribute")],
            id="constraint-empty",
        ),
        pytest.param(
            claim(constraints=[{"matchAttribute": "a.io/b"}] * 33),
            [(TOO_MANY, "spec.devices.constraints")],
            id="constraints-33",
        ),
        pytest.param(claim(config=[{"requests": ["r"], **OPAQUE}]), [], id="config"),
        pytest.param(
            claim(config=[OPAQUE] * 33), [(TOO_MANY, "spec.devices.config")], id="config-33"
        ),
        pytest.param(
            claim(config=[{"requests": ["r/x"], **OPAQUE}]),
            [(INV, "spec.devices.config[0].requests[0]")],
            id="config-unknown-subrequest",
        ),
    ],
)
def test_claim(obj: Obj, causes: list[tuple[str, str]]) -> None:
    assert _create(kinds.RESOURCE_CLAIMS_V1, obj) == causes


def test_claim_defaults_allocation_mode_and_count() -> None:
    obj = claim(
        request(tolerations=[{"key": "a"}]),
        {"name": "p", "firstAvailable": [{"name": "s", "deviceClassName": "gpu"}]},
        request("all", allocationMode="All"),
    )

    validation.default(kinds.RESOURCE_CLAIMS_V1, obj)

    requests = obj["spec"]["devices"]["requests"]
    assert requests[0]["exactly"] == {
        "deviceClassName": "gpu",
        "allocationMode": "ExactCount",
        "count": 1,
        "tolerations": [{"key": "a", "operator": "Equal"}],
    }
    assert requests[1]["firstAvailable"][0]["allocationMode"] == "ExactCount"
    assert requests[1]["firstAvailable"][0]["count"] == 1
    assert requests[2]["exactly"] == {"deviceClassName": "gpu", "allocationMode": "All"}
    assert obj["status"] == {}


def test_claim_and_template_spec_are_immutable() -> None:
    old = claim()
    validation.default(kinds.RESOURCE_CLAIMS_V1, old)
    new = _set(old, "spec.devices.requests[0].exactly.count", 2)
    template = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t", "namespace": "default"},
        "spec": {"spec": claim()["spec"]},
    }
    validation.default(kinds.RESOURCE_CLAIM_TEMPLATES_V1, template)
    new_template = _set(template, "spec.spec.devices.requests[0].name", "other")

    assert _causes(validation.validate_update(kinds.RESOURCE_CLAIMS_V1, new, old)) == [
        (INV, "spec")
    ]
    assert _causes(
        validation.validate_update(kinds.RESOURCE_CLAIM_TEMPLATES_V1, new_template, template)
    ) == [(INV, "spec")]
    assert _create(kinds.RESOURCE_CLAIM_TEMPLATES_V1, template) == []


ALLOCATION = {
    "devices": {"results": [{"request": "r", "driver": DRIVER, "pool": "node-0", "device": "d0"}]}
}
POD_REF = {"resource": "pods", "name": "p", "uid": "u1"}


def _status(status: Obj, *, old: Obj | None = None, deleting: bool = False) -> Obj:
    obj = claim()
    validation.default(kinds.RESOURCE_CLAIMS_V1, obj)
    if deleting:
        obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {**obj, "status": status} if old is None else {**obj, "status": old}


@pytest.mark.parametrize(
    ("old", "new", "causes"),
    [
        pytest.param({}, {"allocation": ALLOCATION}, [], id="allocate"),
        pytest.param(
            {}, {"allocation": ALLOCATION, "reservedFor": [POD_REF]}, [], id="allocate-reserve"
        ),
        pytest.param({"allocation": ALLOCATION}, {}, [], id="deallocate"),
        pytest.param(
            {"allocation": ALLOCATION},
            {"allocation": _set(ALLOCATION, "devices.results[0].device", "d1")},
            [(INV, "status.allocation")],
            id="allocation-immutable",
        ),
        pytest.param(
            {}, {"reservedFor": [POD_REF]}, [(FORB, "status.reservedFor")], id="reserve-unallocated"
        ),
        pytest.param(
            {},
            {
                "allocation": ALLOCATION,
                "reservedFor": [{**POD_REF, "name": f"p{i}", "uid": f"u{i}"} for i in range(256)],
            },
            [],
            id="reserved-for-256",
        ),
        pytest.param(
            {},
            {
                "allocation": ALLOCATION,
                "reservedFor": [{**POD_REF, "name": f"p{i}", "uid": f"u{i}"} for i in range(257)],
            },
            [(TOO_MANY, "status.reservedFor")],
            id="reserved-for-257",
        ),
        pytest.param(
            {},
            {"allocation": ALLOCATION, "reservedFor": [POD_REF, POD_REF]},
            [(DUP, "status.reservedFor[1]")],
            id="reserved-for-duplicate",
        ),
        pytest.param(
            {},
            {
                "allocation": _set(
                    ALLOCATION, "devices.results", ALLOCATION["devices"]["results"] * 33
                )
            },
            [(TOO_MANY, "status.allocation.devices.results")],
            id="results-33",
        ),
        pytest.param(
            {},
            {"allocation": _set(ALLOCATION, "devices.results[0].device", "")},
            [(REQ, "status.allocation.devices.results[0].device")],
            id="result-device-required",
        ),
        pytest.param(
            {"allocation": ALLOCATION},
            {
                "allocation": ALLOCATION,
                "devices": [{"driver": DRIVER, "pool": "node-0", "device": "d0"}],
            },
            [],
            id="device-status",
        ),
        pytest.param(
            {"allocation": ALLOCATION},
            {
                "allocation": ALLOCATION,
                "devices": [{"driver": DRIVER, "pool": "node-0", "device": "d9"}],
            },
            [(INV, "status.devices[0]")],
            id="device-status-not-allocated",
        ),
        pytest.param(
            {"allocation": ALLOCATION},
            {
                "allocation": ALLOCATION,
                "devices": [{"driver": DRIVER, "pool": "node-0", "device": "d0"}] * 2,
            },
            [(DUP, "status.devices[1]")],
            id="device-status-duplicate",
        ),
    ],
)
def test_claim_status(old: Obj, new: Obj, causes: list[tuple[str, str]]) -> None:
    before = _status({}, old=old)
    after = _status(new)

    errs = validation.validate_status_update(kinds.RESOURCE_CLAIMS_V1, after, before)

    assert _causes(errs) == causes


def test_no_new_consumers_while_the_claim_is_deleted() -> None:
    old = _status({}, old={"allocation": ALLOCATION, "reservedFor": [POD_REF]}, deleting=True)
    more = _status(
        {"allocation": ALLOCATION, "reservedFor": [POD_REF, {**POD_REF, "uid": "u2"}]},
        deleting=True,
    )
    fewer = _status({"allocation": ALLOCATION}, deleting=True)

    assert _causes(validation.validate_status_update(kinds.RESOURCE_CLAIMS_V1, more, old)) == [
        (FORB, "status.reservedFor")
    ]
    assert validation.validate_status_update(kinds.RESOURCE_CLAIMS_V1, fewer, old) == []


TAINT = {"key": "example.com/broken", "value": "yes", "effect": "NoSchedule"}
D0 = "spec.devices[0]"


@pytest.mark.parametrize(
    ("obj", "causes"),
    [
        pytest.param(resource_slice(), [], id="valid"),
        pytest.param(resource_slice(nodeName=None, allNodes=True), [], id="all-nodes"),
        pytest.param(resource_slice(nodeName=None), [(REQ, "spec")], id="node-selection-required"),
        pytest.param(
            resource_slice(allNodes=True), [(INV, "spec")], id="node-selection-exactly-one"
        ),
        pytest.param(
            resource_slice(
                nodeName=None,
                nodeSelector={"nodeSelectorTerms": [{"matchLabels": {}}, {}]},
            ),
            [(INV, "spec.nodeSelector.nodeSelectorTerms")],
            id="node-selector-one-term",
        ),
        pytest.param(
            resource_slice(device(nodeName="node-0")),
            [(FORB, f"{D0}.nodeName")],
            id="device-node-without-per-device",
        ),
        pytest.param(
            resource_slice(device(allNodes=True), nodeName=None, perDeviceNodeSelection=True),
            [],
            id="per-device",
        ),
        pytest.param(
            resource_slice(device(), nodeName=None, perDeviceNodeSelection=True),
            [(REQ, D0)],
            id="per-device-needs-one",
        ),
        pytest.param(
            resource_slice(driver=""),
            [(REQ, "spec.driver"), (INV, "spec.driver")],
            id="driver-required",
        ),
        pytest.param(resource_slice(driver="x" * 64), [(TOO_LONG, "spec.driver")], id="driver-63"),
        pytest.param(
            resource_slice(pool={"name": "", "resourceSliceCount": 1}),
            [(REQ, "spec.pool.name")],
            id="pool-name-required",
        ),
        pytest.param(
            resource_slice(pool={"name": "a/b.c", "resourceSliceCount": 1}),
            [],
            id="pool-name-segments",
        ),
        pytest.param(
            resource_slice(pool={"name": "a//b", "resourceSliceCount": 1}),
            [(INV, "spec.pool.name")],
            id="pool-name-empty-segment",
        ),
        pytest.param(
            resource_slice(pool={"name": "p", "resourceSliceCount": 0}),
            [(INV, "spec.pool.resourceSliceCount")],
            id="slice-count-positive",
        ),
        pytest.param(
            resource_slice(pool={"name": "p", "generation": -1, "resourceSliceCount": 1}),
            [(INV, "spec.pool.generation")],
            id="generation-non-negative",
        ),
        pytest.param(resource_slice(*(device(f"d{i}") for i in range(128))), [], id="devices-128"),
        pytest.param(
            resource_slice(*(device(f"d{i}") for i in range(129))),
            [(TOO_MANY, "spec.devices")],
            id="devices-129",
        ),
        pytest.param(
            resource_slice(*(device(f"d{i}", taints=[TAINT]) for i in range(65))),
            [(TOO_MANY, "spec.devices")],
            id="devices-with-taints-65",
        ),
        pytest.param(
            resource_slice(device(), device()), [(DUP, "spec.devices[1].name")], id="device-names"
        ),
        pytest.param(resource_slice(device("D_0")), [(INV, f"{D0}.name")], id="device-name-label"),
        pytest.param(
            resource_slice(device(attributes={f"a{i}": {"int": i} for i in range(32)})),
            [],
            id="attributes-32",
        ),
        pytest.param(
            resource_slice(
                device(
                    attributes={f"a{i}": {"int": i} for i in range(16)},
                    capacity={f"c{i}": {"value": "1"} for i in range(17)},
                )
            ),
            [(TOO_MANY, D0)],
            id="attributes-and-capacity-33",
        ),
        pytest.param(
            resource_slice(device(attributes={"a": {"int": 1, "bool": True}})),
            [(INV, f"{D0}.attributes[a]")],
            id="attribute-one-value",
        ),
        pytest.param(
            resource_slice(device(attributes={"a": {"string": "x" * 65}})),
            [(TOO_LONG, f"{D0}.attributes[a].string")],
            id="attribute-string-64",
        ),
        pytest.param(
            resource_slice(device(attributes={"a": {"version": "v1.0.0"}})),
            [(INV, f"{D0}.attributes[a].version")],
            id="attribute-semver",
        ),
        pytest.param(
            resource_slice(device(attributes={"example.com/model": {"string": "a"}})),
            [],
            id="attribute-qualified",
        ),
        pytest.param(
            resource_slice(device(attributes={"1abc": {"bool": True}})),
            [(INV, f"{D0}.attributes[1abc]")],
            id="attribute-c-identifier",
        ),
        pytest.param(
            resource_slice(device(attributes={"a" * 33: {"bool": True}})),
            [(TOO_LONG, f"{D0}.attributes[{'a' * 33}]")],
            id="attribute-id-32",
        ),
        pytest.param(resource_slice(device(taints=[TAINT] * 16)), [], id="taints-16"),
        pytest.param(
            resource_slice(device(taints=[TAINT] * 17)),
            [(TOO_MANY, f"{D0}.taints")],
            id="taints-17",
        ),
        pytest.param(
            resource_slice(device(taints=[{**TAINT, "effect": "Sometimes"}])),
            [(NOT_SUP, f"{D0}.taints[0].effect")],
            id="taint-effect",
        ),
        pytest.param(
            resource_slice(
                devices=None,
                sharedCounters=[{"name": "mem", "counters": {"bytes": {"value": "8Gi"}}}],
            ),
            [],
            id="shared-counters",
        ),
        pytest.param(
            resource_slice(
                sharedCounters=[{"name": "mem", "counters": {"bytes": {"value": "8Gi"}}}]
            ),
            [(INV, "spec")],
            id="devices-or-counters",
        ),
        pytest.param(
            resource_slice(
                devices=None,
                sharedCounters=[
                    {"name": f"s{i}", "counters": {"c": {"value": "1"}}} for i in range(9)
                ],
            ),
            [(TOO_MANY, "spec.sharedCounters")],
            id="counter-sets-9",
        ),
        pytest.param(
            resource_slice(
                device(
                    consumesCounters=[
                        {"counterSet": f"s{i}", "counters": {"c": {"value": "1"}}} for i in range(3)
                    ]
                )
            ),
            [(TOO_MANY, f"{D0}.consumesCounters")],
            id="consumes-counters-3",
        ),
    ],
)
def test_resource_slice(obj: Obj, causes: list[tuple[str, str]]) -> None:
    assert _create(kinds.RESOURCE_SLICES, obj) == causes


@pytest.mark.parametrize(
    ("path", "value"),
    [
        pytest.param("spec.driver", "other.example.com", id="driver"),
        pytest.param("spec.pool.name", "other", id="pool-name"),
        pytest.param("spec.nodeName", "node-1", id="node-name"),
    ],
)
def test_slice_fields_are_immutable(path: str, value: str) -> None:
    old = resource_slice()
    new = _set(old, path, value)

    errs = validation.validate_update(kinds.RESOURCE_SLICES, new, old)

    assert (INV, path) in _causes(errs)
    assert (
        validation.validate_update(kinds.RESOURCE_SLICES, _set(old, "spec.pool.generation", 1), old)
        == []
    )


@pytest.mark.parametrize(
    ("spec", "causes"),
    [
        pytest.param({"deviceSelector": {"driver": DRIVER}, "taint": TAINT}, [], id="valid"),
        pytest.param({"deviceSelector": {}}, [(REQ, "spec.taint")], id="taint-required"),
        pytest.param(
            {"deviceSelector": {"device": "Bad_Device"}, "taint": TAINT},
            [(INV, "spec.deviceSelector.device")],
            id="device-name",
        ),
        pytest.param({"taint": {**TAINT, "effect": ""}}, [(REQ, "spec.taint.effect")], id="effect"),
    ],
)
def test_device_taint_rule(spec: Obj, causes: list[tuple[str, str]]) -> None:
    obj = {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "broken"},
        "spec": spec,
    }
    assert _create(kinds.DEVICE_TAINT_RULES, obj) == causes


@pytest.mark.parametrize(
    ("rt", "obj"),
    [
        pytest.param(kinds.DEVICE_CLASSES, device_class(selectors="x"), id="class-selectors"),
        pytest.param(kinds.RESOURCE_CLAIMS_V1, claim(request(count="1")), id="claim-count"),
        pytest.param(kinds.RESOURCE_CLAIMS_V1, _set(claim(), "spec.devices", []), id="devices"),
        pytest.param(kinds.RESOURCE_SLICES, resource_slice(devices={"a": 1}), id="slice-devices"),
        pytest.param(kinds.RESOURCE_SLICES, resource_slice(pool=7), id="slice-pool"),
        pytest.param(
            kinds.RESOURCE_SLICES, resource_slice(device(attributes=[1])), id="attributes"
        ),
    ],
)
def test_wrong_json_types_are_field_errors(rt: ResourceType, obj: Obj) -> None:
    assert _create(rt, obj) != []
