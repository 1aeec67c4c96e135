"""resource.k8s.io and scheduling.k8s.io fields carry upstream's protobuf field numbers: every
field of every struct those groups serve in each mode is numbered, uniquely within its struct,
and a sample of numbers, Go pointers, wire forms and embedded structs matches upstream's
generated.proto and types.go of the mode's Kubernetes version."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from draplane.api.schema import Field, Schemas, Struct, model, schemas_for
from draplane.api.schema.meta import list_metadata_field, metadata_field, type_meta
from draplane.api.versions import MODES, Mode

GROUPS = ("resource.k8s.io", "scheduling.k8s.io")
OWN = ("io.k8s.api.resource.", "io.k8s.api.scheduling.")
"""The structs numbered here; the core and meta structs they refer to are numbered elsewhere."""
PENDING = frozenset({*type_meta(), metadata_field(), list_metadata_field()})
"""TypeMeta has no field number; ObjectMeta/ListMeta `metadata` are numbered with meta.py."""


def _leaf(t: model.Type) -> str:
    while isinstance(t, model.Arr | model.Map):
        t = t.item if isinstance(t, model.Arr) else t.value
    return t


def _lists(schemas: Schemas, mode: Mode) -> set[str]:
    return {
        found.name
        for rt in mode.served
        if rt.group in GROUPS
        and (found := schemas.kind_struct(rt.group, rt.version, rt.kind + "List")) is not None
    }


def _reachable(schemas: Schemas, mode: Mode) -> dict[str, Struct]:
    """The resource.k8s.io and scheduling.k8s.io structs reachable from the mode's kinds."""
    stack: list[Struct] = []
    for rt in mode.served:
        if rt.group in GROUPS:
            for kind in (rt.kind, rt.kind + "List"):
                found = schemas.kind_struct(rt.group, rt.version, kind)
                assert found is not None, (rt.group, rt.version, kind)
                stack.append(found)
    seen: dict[str, Struct] = {}
    while stack:
        struct = stack.pop()
        if struct.name in seen or not struct.name.startswith(OWN):
            continue
        seen[struct.name] = struct
        stack.extend(schemas.get(_leaf(t)) for t in struct.nested.values())
    return seen


def _pending(struct_name: str, fld: Field, lists: set[str]) -> bool:
    # A List's `items` is built by meta.serve with the metadata; upstream numbers it 2.
    return fld in PENDING or (struct_name in lists and fld.name == "items")


MODE_NAMES = sorted(MODES)


@pytest.mark.parametrize("mode_name", MODE_NAMES)
def test_every_served_field_is_numbered(mode_name: str) -> None:
    mode = MODES[mode_name]
    schemas = schemas_for(mode.name)
    lists = _lists(schemas, mode)
    reached = _reachable(schemas, mode)
    unnumbered = [
        f"{name}.{fld.name}"
        for name, struct in reached.items()
        for fld in struct.fields
        if fld.tag == 0 and not _pending(name, fld, lists)
    ]
    assert unnumbered == []
    items = {reached[name].by_name["items"].tag for name in lists}
    assert items <= {0, 2}


@pytest.mark.parametrize("mode_name", MODE_NAMES)
def test_field_numbers_are_unique_within_a_struct(mode_name: str) -> None:
    mode = MODES[mode_name]
    schemas = schemas_for(mode.name)
    clashes = []
    for name, struct in _reachable(schemas, mode).items():
        numbered = [fld for fld in struct.fields if fld.tag]
        keys = Counter((fld.embedded, fld.tag) for fld in numbered)
        clashes += [f"{name} {key}" for key, n in keys.items() if n > 1]
        plain = {fld.tag for fld in numbered if not fld.embedded}
        embedded = {fld.embedded for fld in numbered if fld.embedded}
        clashes += [f"{name} field {n} is also an embedded struct" for n in plain & embedded]
    assert clashes == []


@pytest.mark.parametrize(
    ("mode_name", "expected"),
    [
        ("1.28", "io.k8s.api.resource.v1alpha2.PodSchedulingContextStatus"),
        ("1.28", "io.k8s.api.scheduling.v1.PriorityClass"),
        ("1.36", "io.k8s.api.resource.v1beta1.BasicDevice"),
        ("1.36", "io.k8s.api.resource.v1beta2.DeviceTaintSelector"),
        ("1.36", "io.k8s.api.resource.v1.CapacityRequestPolicyRange"),
    ],
)
def test_the_walk_reaches_nested_structs(mode_name: str, expected: str) -> None:
    mode = MODES[mode_name]
    assert expected in _reachable(schemas_for(mode.name), mode)


def _row(mode: str, message: str, field: str, tag: int, **attrs: Any) -> Any:
    """Upstream `message` (package-qualified, as in generated.proto) field `field` is `tag`."""
    extra = "".join(f" {k}={v}" for k, v in attrs.items())
    return pytest.param(mode, message, field, tag, attrs, id=f"{message}.{field}={tag}{extra}")


UPSTREAM = [
    _row("1.28", "resource.v1alpha2.ResourceClaimSpec", "allocationMode", 3),
    _row("1.28", "resource.v1alpha2.ResourceClaimSpec", "parametersRef", 2),
    _row("1.28", "resource.v1alpha2.ResourceClass", "suitableNodes", 4),
    _row("1.28", "resource.v1alpha2.ResourceClassParametersReference", "namespace", 4),
    _row("1.28", "resource.v1alpha2.ResourceClaimStatus", "deallocationRequested", 4),
    _row("1.28", "resource.v1alpha2.AllocationResult", "availableOnNodes", 2),
    _row("1.28", "resource.v1alpha2.ResourceClaimConsumerReference", "resource", 3),
    _row("1.28", "resource.v1alpha2.PodSchedulingContext", "status", 3),
    _row("1.28", "resource.v1alpha2.ResourceClaimTemplateSpec", "metadata", 1),
    _row("1.28", "scheduling.v1.PriorityClass", "value", 2),
    _row("1.28", "scheduling.v1.PriorityClass", "preemptionPolicy", 5, pointer=True),
    _row("1.36", "scheduling.v1.PriorityClass", "globalDefault", 3),
    _row("1.36", "resource.v1.DeviceRequest", "exactly", 2),
    _row("1.36", "resource.v1.DeviceRequest", "firstAvailable", 3),
    _row("1.36", "resource.v1.ExactDeviceRequest", "adminAccess", 5, pointer=True),
    _row("1.36", "resource.v1.ExactDeviceRequest", "capacity", 7),
    _row("1.36", "resource.v1.DeviceSubRequest", "tolerations", 6),
    _row("1.36", "resource.v1.ResourceSliceSpec", "sharedCounters", 8),
    _row("1.36", "resource.v1.ResourceSliceSpec", "nodeName", 3, pointer=True),
    _row("1.36", "resource.v1.ResourceSliceSpec", "perDeviceNodeSelection", 7, pointer=True),
    _row("1.36", "resource.v1.Device", "allowMultipleAllocations", 12, pointer=True),
    _row("1.36", "resource.v1.DeviceAttribute", "int", 2, pointer=True),
    _row("1.36", "resource.v1.DeviceCapacity", "requestPolicy", 2),
    _row("1.36", "resource.v1.DeviceAllocationResult", "results", 1),
    _row("1.36", "resource.v1.AllocationResult", "nodeSelector", 3),
    _row("1.36", "resource.v1.AllocationResult", "allocationTimestamp", 5),
    _row("1.36", "resource.v1.DeviceRequestAllocationResult", "shareID", 9, pointer=True),
    _row("1.36", "resource.v1.DeviceRequestAllocationResult", "consumedCapacity", 10),
    _row("1.36", "resource.v1.ResourceClaimStatus", "devices", 4),
    _row("1.36", "resource.v1.AllocatedDeviceStatus", "shareID", 7, pointer=True),
    _row("1.36", "resource.v1.AllocatedDeviceStatus", "data", 5, wire="raw"),
    _row("1.36", "resource.v1.OpaqueDeviceConfiguration", "parameters", 2, wire="raw"),
    _row("1.36", "resource.v1.DeviceClassConfiguration", "opaque", 1, embedded=1),
    _row("1.36", "resource.v1.DeviceClaimConfiguration", "opaque", 1, embedded=2),
    _row("1.36", "resource.v1.DeviceAllocationConfiguration", "opaque", 1, embedded=3),
    _row("1.36", "resource.v1.DeviceClassSpec", "extendedResourceName", 4, pointer=True),
    _row("1.36", "resource.v1.DeviceToleration", "tolerationSeconds", 5, pointer=True),
    _row("1.36", "resource.v1.DeviceConstraint", "distinctAttribute", 3, pointer=True),
    _row("1.36", "resource.v1beta2.DeviceSubRequest", "capacity", 7),
    _row("1.36", "resource.v1beta2.DeviceTaintSelector", "driver", 2, pointer=True),
    _row("1.36", "resource.v1beta2.DeviceTaintRule", "status", 3),
    _row("1.36", "resource.v1beta1.DeviceSubRequest", "capacity", 8),
    _row("1.36", "resource.v1beta1.DeviceRequest", "adminAccess", 6, pointer=True),
    _row("1.36", "resource.v1beta1.DeviceRequest", "firstAvailable", 7),
    _row("1.36", "resource.v1beta1.DeviceRequest", "capacity", 9),
    _row("1.36", "resource.v1beta1.Device", "basic", 2),
    _row("1.36", "resource.v1beta1.BasicDevice", "allowMultipleAllocations", 11, pointer=True),
    _row("1.36", "resource.v1beta1.ResourceSliceSpec", "nodeName", 3),
    _row("1.36", "resource.v1beta1.ResourceSliceSpec", "allNodes", 5),
]


@pytest.mark.parametrize(("mode_name", "message", "field", "tag", "attrs"), UPSTREAM)
def test_field_numbers_match_upstream(
    mode_name: str, message: str, field: str, tag: int, attrs: dict[str, Any]
) -> None:
    fld = schemas_for(mode_name).get("io.k8s.api." + message).by_name[field]
    assert (fld.tag, fld.pointer, fld.wire, fld.embedded) == (
        tag,
        attrs.get("pointer", False),
        attrs.get("wire", ""),
        attrs.get("embedded", 0),
    )
