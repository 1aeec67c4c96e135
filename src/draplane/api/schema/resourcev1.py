"""resource.k8s.io/v1, v1beta2 and v1beta1 (Kubernetes 1.36, the 1.36 mode): DeviceClass,
ResourceClaim and ResourceClaimTemplate here, ResourceSlice and v1beta2 DeviceTaintRule in
`resourcev1slices`. v1 and v1beta2 have one shape; v1beta1 differs in two places: a request
carries the `exactly` fields flat next to `firstAvailable`, and a device's fields sit under
`basic` (BasicDevice). Each version's structs are registered under its own OpenAPI names.

Field numbers (`tag`) are those of upstream's resource/<version>/generated.proto of 1.34-1.36;
where v1beta1 numbers a shared field differently (its flat DeviceRequest, DeviceSubRequest's
`tolerations` and `capacity`), the version picks the number. The `opaque` configuration is a
field of the DeviceConfiguration Go struct that the configuration structs embed (`embedded`).
"""

from __future__ import annotations

from draplane.api.schema import resourcev1slices
from draplane.api.schema.affinity import NODE_SELECTOR
from draplane.api.schema.meta import OBJECT_META, metadata_field, serve, type_meta
from draplane.api.schema.model import Arr, Field, Map, f, struct
from draplane.api.schema.services import CONDITION

GROUP = "resource.k8s.io"


def _request_fields(selector: str, first: int, *, class_required: bool = True) -> list[Field]:
    """deviceClassName, selectors, allocationMode and count, numbered from `first`."""
    return [
        f(
            "deviceClassName",
            "string",
            "The DeviceClass to allocate from.",
            required=class_required,
            tag=first,
        ),
        f(
            "selectors",
            Arr(selector),
            "Selectors ANDed with the class's.",
            list_type="atomic",
            tag=first + 1,
        ),
        f(
            "allocationMode",
            "string",
            "ExactCount (default) or All.",
            enum=("All", "ExactCount"),
            tag=first + 2,
        ),
        f("count", "int64", "How many devices, for ExactCount (default 1).", tag=first + 3),
    ]


def _requests(version: str, p: str, selector: str) -> str:
    """Register the request structs of `version`; return its DeviceRequest."""
    toleration = struct(
        p + "DeviceToleration",
        "A toleration of device taints.",
        f("key", "string", "The taint key; empty matches every key with Exists.", tag=1),
        f("operator", "string", "Exists or Equal.", enum=("Equal", "Exists"), tag=2),
        f("value", "string", "The taint value for Equal.", tag=3),
        f("effect", "string", "The taint effect; empty matches all.", tag=4),
        f(
            "tolerationSeconds",
            "int64",
            "How long a NoExecute taint is tolerated.",
            tag=5,
            pointer=True,
        ),
    )
    capacity = struct(
        p + "CapacityRequirements",
        "Capacity a request consumes of shareable devices.",
        f("requests", Map("quantity"), "Capacity per name.", tag=1),
    )

    def tolerations(tag: int) -> Field:
        return f(
            "tolerations", Arr(toleration), "Tolerated device taints.", list_type="atomic", tag=tag
        )

    def capacity_field(tag: int) -> Field:
        return f("capacity", capacity, "Capacity of shareable devices to consume.", tag=tag)

    def admin_access(tag: int) -> Field:
        return f(
            "adminAccess",
            "boolean",
            "Administrative access to devices in use.",
            tag=tag,
            pointer=True,
        )

    exact = struct(
        p + "ExactDeviceRequest",
        "A request for devices of one class.",
        *_request_fields(selector, 1),
        admin_access(5),
        tolerations(6),
        capacity_field(7),
    )
    beta1 = version == "v1beta1"
    sub_request = struct(
        p + "DeviceSubRequest",
        "One alternative of a firstAvailable request.",
        f("name", "string", "Name of the subrequest.", required=True, tag=1),
        *_request_fields(selector, 2),
        tolerations(7 if beta1 else 6),
        capacity_field(8 if beta1 else 7),
    )

    def first_available(tag: int) -> Field:
        return f(
            "firstAvailable",
            Arr(sub_request),
            "Alternatives tried in order.",
            list_type="atomic",
            tag=tag,
        )

    name = f("name", "string", "Name of the request.", required=True, tag=1)
    if beta1:
        return struct(
            p + "DeviceRequest",
            "A request for devices: of one class, or `firstAvailable` alternatives.",
            name,
            *_request_fields(selector, 2, class_required=False),
            admin_access(6),
            first_available(7),
            tolerations(8),
            capacity_field(9),
        )
    return struct(
        p + "DeviceRequest",
        "A request for devices; exactly one of `exactly` and `firstAvailable` is set.",
        name,
        f("exactly", exact, "The devices of one class.", tag=2),
        first_available(3),
    )


def _opaque(opaque: str, embedded: int) -> Field:
    """DeviceConfiguration's `opaque`, inlined in JSON, embedded as field `embedded`."""
    return f("opaque", opaque, "Driver-specific parameters.", tag=1, embedded=embedded)


def _applies_to(tag: int) -> Field:
    return f(
        "requests",
        Arr("string"),
        "Requests it applies to (all when empty).",
        list_type="atomic",
        tag=tag,
    )


def _allocation(p: str, opaque: str) -> str:
    """Register `AllocationResult` and what it holds; return its name."""
    result = struct(
        p + "DeviceRequestAllocationResult",
        "One allocated device.",
        f("request", "string", "The request (or request/subrequest).", required=True, tag=1),
        f("driver", "string", "The device's driver.", required=True, tag=2),
        f("pool", "string", "The device's pool.", required=True, tag=3),
        f("device", "string", "The device's name.", required=True, tag=4),
        f("adminAccess", "boolean", "Allocated with admin access.", tag=5, pointer=True),
        f(
            "tolerations",
            Arr(p + "DeviceToleration"),
            "The request's tolerations.",
            list_type="atomic",
            tag=6,
        ),
        f(
            "bindingConditions",
            Arr("string"),
            "Conditions to wait for.",
            list_type="atomic",
            tag=7,
        ),
        f(
            "bindingFailureConditions",
            Arr("string"),
            "Conditions that fail the binding.",
            list_type="atomic",
            tag=8,
        ),
        f("shareID", "string", "This allocation's share of the device.", tag=9, pointer=True),
        f("consumedCapacity", Map("quantity"), "Capacity consumed of the device.", tag=10),
    )
    allocation_config = struct(
        p + "DeviceAllocationConfiguration",
        "Configuration handed to the drivers.",
        f("source", "string", "FromClass or FromClaim.", required=True, tag=1),
        f("requests", Arr("string"), "Requests it applies to.", list_type="atomic", tag=2),
        _opaque(opaque, 3),
    )
    return struct(
        p + "AllocationResult",
        "What was allocated to a claim.",
        f(
            "devices",
            struct(
                p + "DeviceAllocationResult",
                "The allocated devices and their configuration.",
                f("results", Arr(result), "One entry per device.", list_type="atomic", tag=1),
                f(
                    "config",
                    Arr(allocation_config),
                    "Configuration.",
                    list_type="atomic",
                    tag=2,
                ),
            ),
            "The devices.",
            tag=1,
        ),
        f("nodeSelector", NODE_SELECTOR, "Nodes where the allocation can be used.", tag=3),
        f("allocationTimestamp", "time", "When the allocation was made.", tag=5),
    )


def _claim_status(p: str, opaque: str) -> str:
    """Register `ResourceClaimStatus` and what it holds; return its name."""
    consumer = struct(
        p + "ResourceClaimConsumerReference",
        "An object (usually a pod) that uses a claim.",
        f("apiGroup", "string", "API group of the consumer; empty for the core group.", tag=1),
        f("resource", "string", "Resource of the consumer, e.g. pods.", required=True, tag=3),
        f("name", "string", "Name of the consumer.", required=True, tag=4),
        f("uid", "string", "UID of the consumer.", required=True, tag=5),
    )
    device_status = struct(
        p + "AllocatedDeviceStatus",
        "What a driver reports about an allocated device.",
        f("driver", "string", "The device's driver.", required=True, tag=1),
        f("pool", "string", "The device's pool.", required=True, tag=2),
        f("device", "string", "The device's name.", required=True, tag=3),
        f("shareID", "string", "The allocation's share of the device.", tag=7, pointer=True),
        f(
            "conditions",
            Arr(CONDITION),
            "Conditions of the device.",
            list_type="map",
            map_keys=("type",),
            tag=4,
        ),
        f("data", "json", "Driver data, a JSON object.", tag=5, wire="raw"),
        f(
            "networkData",
            struct(
                p + "NetworkDeviceData",
                "Network data of the device.",
                f("interfaceName", "string", "The network interface.", tag=1),
                f(
                    "ips",
                    Arr("string"),
                    "IP addresses in CIDR notation.",
                    list_type="atomic",
                    tag=2,
                ),
                f("hardwareAddress", "string", "The hardware address.", tag=3),
            ),
            "Network data.",
            tag=6,
        ),
    )
    return struct(
        p + "ResourceClaimStatus",
        "Whether and how a claim was allocated, and who uses it.",
        f("allocation", _allocation(p, opaque), "Set once the claim is allocated.", tag=1),
        f(
            "reservedFor",
            Arr(consumer),
            "The consumers of the claim.",
            list_type="map",
            map_keys=("uid",),
            merge="uid",
            tag=2,
        ),
        f(
            "devices",
            Arr(device_status),
            "Status of the allocated devices.",
            list_type="map",
            map_keys=("driver", "device", "pool", "shareID"),
            tag=4,
        ),
    )


def _register(version: str) -> None:
    p = f"io.k8s.api.resource.{version}."
    selector = struct(
        p + "DeviceSelector",
        "One way to select devices; exactly one member is set.",
        f(
            "cel",
            struct(
                p + "CELDeviceSelector",
                "A CEL expression over `device` that must be true.",
                f("expression", "string", "The expression.", required=True, tag=1),
            ),
            "A CEL expression.",
            tag=1,
        ),
    )
    opaque = struct(
        p + "OpaqueDeviceConfiguration",
        "Driver-specific parameters.",
        f("driver", "string", "The driver the parameters are for.", required=True, tag=1),
        f("parameters", "json", "Parameters, a JSON object.", required=True, tag=2, wire="raw"),
    )
    class_config = struct(
        p + "DeviceClassConfiguration", "Configuration of devices of the class.", _opaque(opaque, 1)
    )
    class_spec = struct(
        p + "DeviceClassSpec",
        "The devices of a class and their configuration.",
        f(
            "selectors",
            Arr(selector),
            "Selectors every device must match.",
            list_type="atomic",
            tag=1,
        ),
        f(
            "config",
            Arr(class_config),
            "Configuration of allocated devices.",
            list_type="atomic",
            tag=2,
        ),
        f(
            "extendedResourceName",
            "string",
            "The extended resource pods may request.",
            tag=4,
            pointer=True,
        ),
    )
    serve(
        GROUP,
        version,
        "DeviceClass",
        struct(
            p + "DeviceClass",
            "A class of devices claims can ask for.",
            *type_meta(),
            metadata_field(),
            f("spec", class_spec, "What the class selects.", required=True, tag=2),
        ),
    )
    constraint = struct(
        p + "DeviceConstraint",
        "A constraint across the devices of several requests.",
        _applies_to(1),
        f("matchAttribute", "string", "An attribute all devices share.", tag=2, pointer=True),
        f(
            "distinctAttribute",
            "string",
            "An attribute whose values all differ.",
            tag=3,
            pointer=True,
        ),
    )
    claim_config = struct(
        p + "DeviceClaimConfiguration",
        "Configuration of the devices of some requests.",
        _applies_to(1),
        _opaque(opaque, 2),
    )
    device_claim = struct(
        p + "DeviceClaim",
        "The devices a claim asks for.",
        f(
            "requests",
            Arr(_requests(version, p, selector)),
            "The requests.",
            list_type="atomic",
            tag=1,
        ),
        f(
            "constraints",
            Arr(constraint),
            "Constraints across requests.",
            list_type="atomic",
            tag=2,
        ),
        f(
            "config",
            Arr(claim_config),
            "Configuration of the devices.",
            list_type="atomic",
            tag=3,
        ),
    )
    claim_spec = struct(
        p + "ResourceClaimSpec",
        "What a claim asks for.",
        f("devices", device_claim, "The devices.", tag=1),
    )
    claim_status = _claim_status(p, opaque)
    serve(
        GROUP,
        version,
        "ResourceClaim",
        struct(
            p + "ResourceClaim",
            "A request for devices, and its allocation.",
            *type_meta(),
            metadata_field(),
            f("spec", claim_spec, "What is asked for (immutable).", required=True, tag=2),
            f("status", claim_status, "The allocation and its consumers.", emit=True, tag=3),
        ),
    )
    template_spec = struct(
        p + "ResourceClaimTemplateSpec",
        "The claims made from a template.",
        f("metadata", OBJECT_META, "Labels and annotations of the claims.", emit=True, tag=1),
        f("spec", claim_spec, "The claims' spec.", required=True, tag=2),
    )
    serve(
        GROUP,
        version,
        "ResourceClaimTemplate",
        struct(
            p + "ResourceClaimTemplate",
            "A template of the claims made for pods.",
            *type_meta(),
            metadata_field(),
            f("spec", template_spec, "The claims made from it.", required=True, tag=2),
        ),
    )
    resourcev1slices.register(version)


for _version in ("v1", "v1beta2", "v1beta1"):
    _register(_version)
