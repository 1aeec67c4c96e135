"""resource.k8s.io/v1, v1beta2 and v1beta1 (Kubernetes 1.36, the 1.36 mode): DeviceClass,
ResourceClaim, ResourceClaimTemplate, ResourceSlice, and v1beta2 DeviceTaintRule. v1 and v1beta2
have one shape; v1beta1 differs in two places: a request carries the `exactly` fields flat next
to `firstAvailable`, and a device's fields sit under `basic` (BasicDevice). Each version's
structs are registered under its own OpenAPI names."""

from __future__ import annotations

from draplane.api.schema.affinity import NODE_SELECTOR
from draplane.api.schema.meta import OBJECT_META, metadata_field, serve, type_meta
from draplane.api.schema.model import Arr, Map, f, struct
from draplane.api.schema.services import CONDITION

GROUP = "resource.k8s.io"


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
                f("expression", "string", "The expression.", required=True),
            ),
            "A CEL expression.",
        ),
    )
    opaque = struct(
        p + "OpaqueDeviceConfiguration",
        "Driver-specific parameters.",
        f("driver", "string", "The driver the parameters are for.", required=True),
        f("parameters", "json", "Parameters, a JSON object.", required=True),
    )
    class_config = struct(
        p + "DeviceClassConfiguration",
        "Configuration of devices of the class.",
        f("opaque", opaque, "Driver-specific parameters."),
    )
    class_spec = struct(
        p + "DeviceClassSpec",
        "The devices of a class and their configuration.",
        f("selectors", Arr(selector), "Selectors every device must match.", list_type="atomic"),
        f("config", Arr(class_config), "Configuration of allocated devices.", list_type="atomic"),
        f("extendedResourceName", "string", "The extended resource pods may request."),
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
            f("spec", class_spec, "What the class selects.", required=True),
        ),
    )
    toleration = struct(
        p + "DeviceToleration",
        "A toleration of device taints.",
        f("key", "string", "The taint key; empty matches every key with Exists."),
        f("operator", "string", "Exists or Equal.", enum=("Equal", "Exists")),
        f("value", "string", "The taint value for Equal."),
        f("effect", "string", "The taint effect; empty matches all."),
        f("tolerationSeconds", "int64", "How long a NoExecute taint is tolerated."),
    )
    capacity_requirements = struct(
        p + "CapacityRequirements",
        "Capacity a request consumes of shareable devices.",
        f("requests", Map("quantity"), "Capacity per name."),
    )
    request_fields = (
        f("deviceClassName", "string", "The DeviceClass to allocate from.", required=True),
        f("selectors", Arr(selector), "Selectors ANDed with the class's.", list_type="atomic"),
        f("allocationMode", "string", "ExactCount (default) or All.", enum=("All", "ExactCount")),
        f("count", "int64", "How many devices, for ExactCount (default 1)."),
    )
    exact = struct(
        p + "ExactDeviceRequest",
        "A request for devices of one class.",
        *request_fields,
        f("adminAccess", "boolean", "Administrative access to devices in use."),
        f("tolerations", Arr(toleration), "Tolerated device taints.", list_type="atomic"),
        f("capacity", capacity_requirements, "Capacity of shareable devices to consume."),
    )
    sub_request = struct(
        p + "DeviceSubRequest",
        "One alternative of a firstAvailable request.",
        f("name", "string", "Name of the subrequest.", required=True),
        *request_fields,
        f("tolerations", Arr(toleration), "Tolerated device taints.", list_type="atomic"),
        f("capacity", capacity_requirements, "Capacity of shareable devices to consume."),
    )
    if version == "v1beta1":
        request = struct(
            p + "DeviceRequest",
            "A request for devices: of one class, or `firstAvailable` alternatives.",
            f("name", "string", "Name of the request.", required=True),
            f("deviceClassName", "string", "The DeviceClass to allocate from."),
            *request_fields[1:],
            f("adminAccess", "boolean", "Administrative access to devices in use."),
            f(
                "firstAvailable",
                Arr(sub_request),
                "Alternatives tried in order.",
                list_type="atomic",
            ),
            f("tolerations", Arr(toleration), "Tolerated device taints.", list_type="atomic"),
            f("capacity", capacity_requirements, "Capacity of shareable devices to consume."),
        )
    else:
        request = struct(
            p + "DeviceRequest",
            "A request for devices; exactly one of `exactly` and `firstAvailable` is set.",
            f("name", "string", "Name of the request.", required=True),
            f("exactly", exact, "The devices of one class."),
            f(
                "firstAvailable",
                Arr(sub_request),
                "Alternatives tried in order.",
                list_type="atomic",
            ),
        )
    constraint = struct(
        p + "DeviceConstraint",
        "A constraint across the devices of several requests.",
        f(
            "requests",
            Arr("string"),
            "Requests it applies to (all when empty).",
            list_type="atomic",
        ),
        f("matchAttribute", "string", "An attribute all devices share."),
        f("distinctAttribute", "string", "An attribute whose values all differ."),
    )
    claim_config = struct(
        p + "DeviceClaimConfiguration",
        "Configuration of the devices of some requests.",
        f(
            "requests",
            Arr("string"),
            "Requests it applies to (all when empty).",
            list_type="atomic",
        ),
        f("opaque", opaque, "Driver-specific parameters."),
    )
    device_claim = struct(
        p + "DeviceClaim",
        "The devices a claim asks for.",
        f("requests", Arr(request), "The requests.", list_type="atomic"),
        f("constraints", Arr(constraint), "Constraints across requests.", list_type="atomic"),
        f("config", Arr(claim_config), "Configuration of the devices.", list_type="atomic"),
    )
    claim_spec = struct(
        p + "ResourceClaimSpec",
        "What a claim asks for.",
        f("devices", device_claim, "The devices."),
    )
    result = struct(
        p + "DeviceRequestAllocationResult",
        "One allocated device.",
        f("request", "string", "The request (or request/subrequest).", required=True),
        f("driver", "string", "The device's driver.", required=True),
        f("pool", "string", "The device's pool.", required=True),
        f("device", "string", "The device's name.", required=True),
        f("adminAccess", "boolean", "Allocated with admin access."),
        f("tolerations", Arr(toleration), "The request's tolerations.", list_type="atomic"),
        f("bindingConditions", Arr("string"), "Conditions to wait for.", list_type="atomic"),
        f(
            "bindingFailureConditions",
            Arr("string"),
            "Conditions that fail the binding.",
            list_type="atomic",
        ),
        f("shareID", "string", "This allocation's share of the device."),
        f("consumedCapacity", Map("quantity"), "Capacity consumed of the device."),
    )
    allocation_config = struct(
        p + "DeviceAllocationConfiguration",
        "Configuration handed to the drivers.",
        f("source", "string", "FromClass or FromClaim.", required=True),
        f("requests", Arr("string"), "Requests it applies to.", list_type="atomic"),
        f("opaque", opaque, "Driver-specific parameters."),
    )
    allocation = struct(
        p + "AllocationResult",
        "What was allocated to a claim.",
        f(
            "devices",
            struct(
                p + "DeviceAllocationResult",
                "The allocated devices and their configuration.",
                f("results", Arr(result), "One entry per device.", list_type="atomic"),
                f("config", Arr(allocation_config), "Configuration.", list_type="atomic"),
            ),
            "The devices.",
        ),
        f("nodeSelector", NODE_SELECTOR, "Nodes where the allocation can be used."),
        f("allocationTimestamp", "time", "When the allocation was made."),
    )
    consumer = struct(
        p + "ResourceClaimConsumerReference",
        "An object (usually a pod) that uses a claim.",
        f("apiGroup", "string", "API group of the consumer; empty for the core group."),
        f("resource", "string", "Resource of the consumer, e.g. pods.", required=True),
        f("name", "string", "Name of the consumer.", required=True),
        f("uid", "string", "UID of the consumer.", required=True),
    )
    device_status = struct(
        p + "AllocatedDeviceStatus",
        "What a driver reports about an allocated device.",
        f("driver", "string", "The device's driver.", required=True),
        f("pool", "string", "The device's pool.", required=True),
        f("device", "string", "The device's name.", required=True),
        f("shareID", "string", "The allocation's share of the device."),
        f(
            "conditions",
            Arr(CONDITION),
            "Conditions of the device.",
            list_type="map",
            map_keys=("type",),
        ),
        f("data", "json", "Driver data, a JSON object."),
        f(
            "networkData",
            struct(
                p + "NetworkDeviceData",
                "Network data of the device.",
                f("interfaceName", "string", "The network interface."),
                f("ips", Arr("string"), "IP addresses in CIDR notation.", list_type="atomic"),
                f("hardwareAddress", "string", "The hardware address."),
            ),
            "Network data.",
        ),
    )
    claim_status = struct(
        p + "ResourceClaimStatus",
        "Whether and how a claim was allocated, and who uses it.",
        f("allocation", allocation, "Set once the claim is allocated."),
        f(
            "reservedFor",
            Arr(consumer),
            "The consumers of the claim.",
            list_type="map",
            map_keys=("uid",),
            merge="uid",
        ),
        f(
            "devices",
            Arr(device_status),
            "Status of the allocated devices.",
            list_type="map",
            map_keys=("driver", "device", "pool", "shareID"),
        ),
    )
    serve(
        GROUP,
        version,
        "ResourceClaim",
        struct(
            p + "ResourceClaim",
            "A request for devices, and its allocation.",
            *type_meta(),
            metadata_field(),
            f("spec", claim_spec, "What is asked for (immutable).", required=True),
            f("status", claim_status, "The allocation and its consumers.", emit=True),
        ),
    )
    template_spec = struct(
        p + "ResourceClaimTemplateSpec",
        "The claims made from a template.",
        f("metadata", OBJECT_META, "Labels and annotations of the claims.", emit=True),
        f("spec", claim_spec, "The claims' spec.", required=True),
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
            f("spec", template_spec, "The claims made from it.", required=True),
        ),
    )
    counter = struct(
        p + "Counter", "An amount.", f("value", "quantity", "The amount.", required=True)
    )
    taint = struct(
        p + "DeviceTaint",
        "A taint of a device.",
        f("key", "string", "The taint key.", required=True),
        f("value", "string", "The taint value."),
        f("effect", "string", "NoSchedule, NoExecute or None.", required=True),
        f("timeAdded", "time", "When the taint was added."),
    )
    attribute = struct(
        p + "DeviceAttribute",
        "One attribute value; exactly one member is set.",
        f("int", "int64", "An integer."),
        f("bool", "boolean", "A boolean."),
        f("string", "string", "A string of at most 64 characters."),
        f("version", "string", "A semantic version."),
    )
    capacity = struct(
        p + "DeviceCapacity",
        "A capacity of a device.",
        f("value", "quantity", "The capacity.", required=True),
        f(
            "requestPolicy",
            struct(
                p + "CapacityRequestPolicy",
                "How much of a shareable device's capacity a request may consume.",
                f("default", "quantity", "Consumed when the request names none."),
                f("validValues", Arr("quantity"), "Allowed amounts.", list_type="atomic"),
                f(
                    "validRange",
                    struct(
                        p + "CapacityRequestPolicyRange",
                        "An allowed range of amounts.",
                        f("min", "quantity", "The minimum.", required=True),
                        f("max", "quantity", "The maximum."),
                        f("step", "quantity", "The step."),
                    ),
                    "Allowed range.",
                ),
            ),
            "Request policy.",
        ),
    )
    consumption = struct(
        p + "DeviceCounterConsumption",
        "Counters a device uses of a counter set.",
        f("counterSet", "string", "The counter set.", required=True),
        f("counters", Map(counter), "Amounts per counter.", required=True),
    )
    device_fields = (
        f("attributes", Map(attribute), "Attributes by name."),
        f("capacity", Map(capacity), "Capacities by name."),
        f("consumesCounters", Arr(consumption), "Shared counters used.", list_type="atomic"),
        f("nodeName", "string", "The node of the device (perDeviceNodeSelection)."),
        f("nodeSelector", NODE_SELECTOR, "Nodes that reach the device."),
        f("allNodes", "boolean", "Every node reaches the device."),
        f("taints", Arr(taint), "Taints of the device.", list_type="atomic"),
        f("bindsToNode", "boolean", "The allocation pins the chosen node."),
        f("bindingConditions", Arr("string"), "Conditions to wait for.", list_type="atomic"),
        f(
            "bindingFailureConditions",
            Arr("string"),
            "Conditions that fail the binding.",
            list_type="atomic",
        ),
        f("allowMultipleAllocations", "boolean", "Several claims may share the device."),
    )
    device_name = f("name", "string", "The device's name in its pool.", required=True)
    if version == "v1beta1":
        basic = struct(p + "BasicDevice", "What a device offers.", *device_fields)
        device = struct(
            p + "Device", "One device of a slice.", device_name, f("basic", basic, "The device.")
        )
    else:
        device = struct(p + "Device", "One device of a slice.", device_name, *device_fields)
    slice_spec = struct(
        p + "ResourceSliceSpec",
        "Devices a driver offers in one pool.",
        f("driver", "string", "The driver (immutable).", required=True),
        f(
            "pool",
            struct(
                p + "ResourcePool",
                "The pool the slice belongs to.",
                f("name", "string", "The pool's name (immutable).", required=True),
                f("generation", "int64", "The pool's generation.", required=True),
                f("resourceSliceCount", "int64", "Slices in the pool.", required=True),
            ),
            "The pool.",
            required=True,
        ),
        f("nodeName", "string", "The node of node-local devices (immutable)."),
        f("nodeSelector", NODE_SELECTOR, "Nodes that reach the devices."),
        f("allNodes", "boolean", "Every node reaches the devices."),
        f("devices", Arr(device), "The devices.", list_type="atomic"),
        f("perDeviceNodeSelection", "boolean", "Each device says its nodes."),
        f(
            "sharedCounters",
            Arr(
                struct(
                    p + "CounterSet",
                    "Counters devices of the pool share.",
                    f("name", "string", "The set's name.", required=True),
                    f("counters", Map(counter), "Counters by name.", required=True),
                )
            ),
            "Counter sets.",
            list_type="atomic",
        ),
    )
    serve(
        GROUP,
        version,
        "ResourceSlice",
        struct(
            p + "ResourceSlice",
            "Devices a driver publishes.",
            *type_meta(),
            metadata_field(),
            f("spec", slice_spec, "The devices.", required=True),
        ),
    )
    if version == "v1beta2":
        rule_spec = struct(
            p + "DeviceTaintRuleSpec",
            "Devices to taint and the taint.",
            f(
                "deviceSelector",
                struct(
                    p + "DeviceTaintSelector",
                    "Which devices the taint applies to.",
                    f("driver", "string", "The devices' driver."),
                    f("pool", "string", "The devices' pool."),
                    f("device", "string", "The device's name."),
                ),
                "The devices.",
            ),
            f("taint", taint, "The taint.", required=True),
        )
        rule_status = struct(
            p + "DeviceTaintRuleStatus",
            "The state of the rule.",
            f("conditions", Arr(CONDITION), "Conditions.", list_type="map", map_keys=("type",)),
        )
        serve(
            GROUP,
            version,
            "DeviceTaintRule",
            struct(
                p + "DeviceTaintRule",
                "A taint for matching devices.",
                *type_meta(),
                metadata_field(),
                f("spec", rule_spec, "What is tainted.", required=True),
                f("status", rule_status, "The rule's state."),
            ),
        )


for _version in ("v1", "v1beta2", "v1beta1"):
    _register(_version)
