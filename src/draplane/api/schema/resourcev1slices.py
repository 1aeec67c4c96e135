"""resource.k8s.io/v1, v1beta2 and v1beta1 ResourceSlice (Kubernetes 1.36), and v1beta2
DeviceTaintRule: what drivers publish and what taints their devices. `register(version)` is
called by `resourcev1` for each version, under that version's OpenAPI names.

Field numbers (`tag`) are those of upstream's resource/<version>/generated.proto of 1.34-1.36.
v1beta1 differs from v1 and v1beta2: a device's fields sit under `basic` (BasicDevice, numbered
from 1 where v1's Device numbers them from 2, after `name`), and its ResourceSliceSpec's
`nodeName` and `allNodes` are plain Go values where v1 and v1beta2 made them pointers. The
v1beta2 DeviceTaintRule numbers are v1alpha3's, which it was copied from.
"""

from __future__ import annotations

from draplane.api.schema.affinity import NODE_SELECTOR
from draplane.api.schema.meta import metadata_field, serve, type_meta
from draplane.api.schema.model import Arr, Field, Map, f, struct
from draplane.api.schema.services import CONDITION

GROUP = "resource.k8s.io"


def _device_fields(p: str, first: int, counter: str, taint: str) -> tuple[Field, ...]:
    """A device's fields, numbered from `first` (v1 Device: 2; v1beta1 BasicDevice: 1)."""
    attribute = struct(
        p + "DeviceAttribute",
        "One attribute value; exactly one member is set.",
        f("int", "int64", "An integer.", tag=2, pointer=True),
        f("bool", "boolean", "A boolean.", tag=3, pointer=True),
        f("string", "string", "A string of at most 64 characters.", tag=4, pointer=True),
        f("version", "string", "A semantic version.", tag=5, pointer=True),
    )
    capacity = struct(
        p + "DeviceCapacity",
        "A capacity of a device.",
        f("value", "quantity", "The capacity.", required=True, tag=1),
        f(
            "requestPolicy",
            struct(
                p + "CapacityRequestPolicy",
                "How much of a shareable device's capacity a request may consume.",
                f("default", "quantity", "Consumed when the request names none.", tag=1),
                f("validValues", Arr("quantity"), "Allowed amounts.", list_type="atomic", tag=3),
                f(
                    "validRange",
                    struct(
                        p + "CapacityRequestPolicyRange",
                        "An allowed range of amounts.",
                        f("min", "quantity", "The minimum.", required=True, tag=1),
                        f("max", "quantity", "The maximum.", tag=2),
                        f("step", "quantity", "The step.", tag=3),
                    ),
                    "Allowed range.",
                    tag=4,
                ),
            ),
            "Request policy.",
            tag=2,
        ),
    )
    consumption = struct(
        p + "DeviceCounterConsumption",
        "Counters a device uses of a counter set.",
        f("counterSet", "string", "The counter set.", required=True, tag=1),
        f("counters", Map(counter), "Amounts per counter.", required=True, tag=2),
    )
    n = first
    return (
        f("attributes", Map(attribute), "Attributes by name.", tag=n),
        f("capacity", Map(capacity), "Capacities by name.", tag=n + 1),
        f(
            "consumesCounters",
            Arr(consumption),
            "Shared counters used.",
            list_type="atomic",
            tag=n + 2,
        ),
        f(
            "nodeName",
            "string",
            "The node of the device (perDeviceNodeSelection).",
            tag=n + 3,
            pointer=True,
        ),
        f("nodeSelector", NODE_SELECTOR, "Nodes that reach the device.", tag=n + 4),
        f("allNodes", "boolean", "Every node reaches the device.", tag=n + 5, pointer=True),
        f("taints", Arr(taint), "Taints of the device.", list_type="atomic", tag=n + 6),
        f(
            "bindsToNode",
            "boolean",
            "The allocation pins the chosen node.",
            tag=n + 7,
            pointer=True,
        ),
        f(
            "bindingConditions",
            Arr("string"),
            "Conditions to wait for.",
            list_type="atomic",
            tag=n + 8,
        ),
        f(
            "bindingFailureConditions",
            Arr("string"),
            "Conditions that fail the binding.",
            list_type="atomic",
            tag=n + 9,
        ),
        f(
            "allowMultipleAllocations",
            "boolean",
            "Several claims may share the device.",
            tag=n + 10,
            pointer=True,
        ),
    )


def register(version: str) -> None:
    """Register `version`'s ResourceSlice (and, in v1beta2, DeviceTaintRule) and serve them."""
    p = f"io.k8s.api.resource.{version}."
    counter = struct(
        p + "Counter", "An amount.", f("value", "quantity", "The amount.", required=True, tag=1)
    )
    taint = struct(
        p + "DeviceTaint",
        "A taint of a device.",
        f("key", "string", "The taint key.", required=True, tag=1),
        f("value", "string", "The taint value.", tag=2),
        f("effect", "string", "NoSchedule, NoExecute or None.", required=True, tag=3),
        f("timeAdded", "time", "When the taint was added.", tag=4),
    )
    device_name = f("name", "string", "The device's name in its pool.", required=True, tag=1)
    if version == "v1beta1":
        basic = struct(
            p + "BasicDevice", "What a device offers.", *_device_fields(p, 1, counter, taint)
        )
        device = struct(
            p + "Device",
            "One device of a slice.",
            device_name,
            f("basic", basic, "The device.", tag=2),
        )
    else:
        device = struct(
            p + "Device",
            "One device of a slice.",
            device_name,
            *_device_fields(p, 2, counter, taint),
        )
    # v1 and v1beta2 made these pointers (a oneOf of the node selection); v1beta1 did not.
    pointer = version != "v1beta1"
    slice_spec = struct(
        p + "ResourceSliceSpec",
        "Devices a driver offers in one pool.",
        f("driver", "string", "The driver (immutable).", required=True, tag=1),
        f(
            "pool",
            struct(
                p + "ResourcePool",
                "The pool the slice belongs to.",
                f("name", "string", "The pool's name (immutable).", required=True, tag=1),
                f("generation", "int64", "The pool's generation.", required=True, tag=2),
                f("resourceSliceCount", "int64", "Slices in the pool.", required=True, tag=3),
            ),
            "The pool.",
            required=True,
            tag=2,
        ),
        f(
            "nodeName",
            "string",
            "The node of node-local devices (immutable).",
            tag=3,
            pointer=pointer,
        ),
        f("nodeSelector", NODE_SELECTOR, "Nodes that reach the devices.", tag=4),
        f("allNodes", "boolean", "Every node reaches the devices.", tag=5, pointer=pointer),
        f("devices", Arr(device), "The devices.", list_type="atomic", tag=6),
        f(
            "perDeviceNodeSelection",
            "boolean",
            "Each device says its nodes.",
            tag=7,
            pointer=True,
        ),
        f(
            "sharedCounters",
            Arr(
                struct(
                    p + "CounterSet",
                    "Counters devices of the pool share.",
                    f("name", "string", "The set's name.", required=True, tag=1),
                    f("counters", Map(counter), "Counters by name.", required=True, tag=2),
                )
            ),
            "Counter sets.",
            list_type="atomic",
            tag=8,
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
            f("spec", slice_spec, "The devices.", required=True, tag=2),
        ),
    )
    if version == "v1beta2":
        _register_device_taint_rule(p, taint)


def _register_device_taint_rule(p: str, taint: str) -> None:
    rule_spec = struct(
        p + "DeviceTaintRuleSpec",
        "Devices to taint and the taint.",
        f(
            "deviceSelector",
            struct(
                p + "DeviceTaintSelector",
                "Which devices the taint applies to.",
                f("driver", "string", "The devices' driver.", tag=2, pointer=True),
                f("pool", "string", "The devices' pool.", tag=3, pointer=True),
                f("device", "string", "The device's name.", tag=4, pointer=True),
            ),
            "The devices.",
            tag=1,
        ),
        f("taint", taint, "The taint.", required=True, tag=2),
    )
    rule_status = struct(
        p + "DeviceTaintRuleStatus",
        "The state of the rule.",
        f(
            "conditions",
            Arr(CONDITION),
            "Conditions.",
            list_type="map",
            map_keys=("type",),
            tag=1,
        ),
    )
    serve(
        GROUP,
        "v1beta2",
        "DeviceTaintRule",
        struct(
            p + "DeviceTaintRule",
            "A taint for matching devices.",
            *type_meta(),
            metadata_field(),
            f("spec", rule_spec, "What is tainted.", required=True, tag=2),
            f("status", rule_status, "The rule's state.", tag=3),
        ),
    )
