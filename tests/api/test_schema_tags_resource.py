"""resource.k8s.io and scheduling.k8s.io fields carry upstream's protobuf field numbers: a
sample of numbers, Go pointers, wire forms and embedded structs matches upstream's
generated.proto and types.go of the mode's Kubernetes version. That every field is numbered,
and uniquely, is tests/apiserver/test_protobuf_kinds.py and test_protobuf_field_numbers.py."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api.schema import schemas_for


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
