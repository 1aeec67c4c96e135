"""resource.k8s.io/v1 DeviceClass, ResourceSlice and v1beta2 DeviceTaintRule rules
(kubernetes/kubernetes pkg/apis/resource/validation, 1.36): device attributes and capacity,
node selection, shared counters, taints, limits, and the immutable slice fields.
"""

from __future__ import annotations

import re
from typing import Any

from draplane.api import names
from draplane.api.errors import FieldError, forbidden, invalid, required, too_many
from draplane.api.meta import Obj
from draplane.api.validation import devicecommon as c, nodeaffinity
from draplane.api.validation.objectmeta import (
    add_invalid,
    as_dict,
    as_str,
    field_dict,
    immutable,
    semantic_equal,
    too_long,
    validate_object_meta,
    validate_object_meta_update,
)

CLASS_CONFIG_MAX = 32
DEVICES_MAX = 128
DEVICES_MAX_WITH_TAINTS_OR_COUNTERS = 64
ATTRIBUTES_AND_CAPACITIES_MAX = 32
ATTRIBUTE_STRING_MAX = 64
COUNTER_SETS_MAX = 8
COUNTERS_MAX = 32
CONSUMES_COUNTERS_MAX = 2
DEVICE_TAINTS_MAX = 16
NODE_SELECTION = ("nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection")
DEVICE_NODE_SELECTION = ("nodeName", "nodeSelector", "allNodes")
ATTRIBUTE_TYPES = ("int", "bool", "string", "version")
_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


# --- DeviceClass --------------------------------------------------------------------------


def validate_device_class(obj: Obj, *, stored: bool = False) -> list[FieldError]:
    errs = validate_object_meta(
        obj["metadata"], namespaced=False, name_fn=names.name_is_dns_subdomain
    )
    spec = as_dict(obj.get("spec"), "spec", errs)
    c.selectors(spec.get("selectors"), "spec.selectors", errs, stored=stored)
    for _, config, at in c.items(spec.get("config"), "spec.config", errs, CLASS_CONFIG_MAX):
        c.device_config(config, at, errs)
    extended = spec.get("extendedResourceName")
    if extended is not None:
        name = as_str(extended, "spec.extendedResourceName", errs)
        prefix, slash, _ = name.partition("/")
        if not slash or prefix.endswith("kubernetes.io") or name.startswith("requests."):
            errs.append(
                invalid("spec.extendedResourceName", name, "must be a valid extended resource name")
            )
        else:
            add_invalid(errs, "spec.extendedResourceName", name, names.is_qualified_name(name))
    return errs


def validate_device_class_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    # Selectors exactly as before count as stored; any change (even reordering) makes them new.
    stored = semantic_equal(
        field_dict(obj, "spec").get("selectors"), field_dict(old, "spec").get("selectors")
    )
    errs.extend(validate_device_class(obj, stored=stored))
    return errs


# --- ResourceSlice ------------------------------------------------------------------------


def _one_of(obj: Obj, fields: tuple[str, ...], path: str, errs: list[FieldError]) -> list[str]:
    """The node-selection fields that are set (`allNodes`/`perDeviceNodeSelection` only when
    true); an error unless exactly one is."""
    chosen = [f for f in fields if obj.get(f) not in (None, False, "")]
    if not chosen:
        errs.append(required(path, f"exactly one of `{'`, `'.join(fields)}` is required"))
    elif len(chosen) > 1:
        errs.append(
            invalid(
                path,
                "{" + ", ".join(f"`{f}`" for f in chosen) + "}",
                f"exactly one of `{'`, `'.join(fields)}` is required, but multiple fields are set",
            )
        )
    return chosen


def _node_selection(obj: Obj, path: str, errs: list[FieldError]) -> None:
    node = obj.get("nodeName")
    if node is not None:
        node = as_str(node, f"{path}.nodeName", errs)
        add_invalid(errs, f"{path}.nodeName", node, names.is_dns1123_subdomain(node))
    selector = obj.get("nodeSelector")
    if selector is not None:
        errs.extend(nodeaffinity.validate_node_selector(selector, f"{path}.nodeSelector"))
        terms = selector.get("nodeSelectorTerms") if isinstance(selector, dict) else None
        if isinstance(terms, list) and len(terms) != 1:
            errs.append(
                invalid(
                    f"{path}.nodeSelector.nodeSelectorTerms",
                    len(terms),
                    "must have exactly one node selector term",
                )
            )


def _attributes(device: Obj, at: str, errs: list[FieldError]) -> None:
    attributes = as_dict(device.get("attributes"), f"{at}.attributes", errs)
    capacity = as_dict(device.get("capacity"), f"{at}.capacity", errs)
    for name, value in attributes.items():
        path = f"{at}.attributes[{name}]"
        c.qualified_name(name, path, errs, domain=False)
        value = as_dict(value, path, errs)
        set_ = [t for t in ATTRIBUTE_TYPES if value.get(t) is not None]
        if len(set_) != 1:
            errs.append(invalid(path, None, "exactly one value must be specified"))
            continue
        kind = set_[0]
        v = value[kind]
        if kind == "int" and (not isinstance(v, int) or isinstance(v, bool)):
            errs.append(invalid(f"{path}.int", v, "must be an integer"))
        elif kind == "bool" and not isinstance(v, bool):
            errs.append(invalid(f"{path}.bool", v, "must be a boolean"))
        elif kind in ("string", "version"):
            text = as_str(v, f"{path}.{kind}", errs)
            if len(text) > ATTRIBUTE_STRING_MAX:
                errs.append(too_long(f"{path}.{kind}", text, ATTRIBUTE_STRING_MAX))
            if kind == "version" and not _SEMVER.match(text):
                errs.append(
                    invalid(
                        f"{path}.version",
                        text,
                        "must be a string compatible with semver.org spec 2.0.0",
                    )
                )
    for name, value in capacity.items():
        path = f"{at}.capacity[{name}]"
        c.qualified_name(name, path, errs, domain=False)
        if as_dict(value, path, errs).get("value") is None:
            errs.append(required(f"{path}.value"))
    total = len(attributes) + len(capacity)
    if total > ATTRIBUTES_AND_CAPACITIES_MAX:
        errs.append(too_many(at, total, ATTRIBUTES_AND_CAPACITIES_MAX))


def _device(device: Any, at: str, per_device: bool, errs: list[FieldError]) -> None:
    device = as_dict(device, at, errs)
    _attributes(device, at, errs)
    if per_device:
        _one_of(device, DEVICE_NODE_SELECTION, at, errs)
        _node_selection(device, at, errs)
    else:
        for f in DEVICE_NODE_SELECTION:
            if device.get(f) not in (None, False, ""):
                errs.append(forbidden(f"{at}.{f}", "`perDeviceNodeSelection` must be set to true"))
    c.taints(device.get("taints"), f"{at}.taints", errs, DEVICE_TAINTS_MAX)
    for _, use, uat in c.items(
        device.get("consumesCounters"), f"{at}.consumesCounters", errs, CONSUMES_COUNTERS_MAX
    ):
        use = as_dict(use, uat, errs)
        set_name = as_str(use.get("counterSet"), f"{uat}.counterSet", errs)
        if not set_name:
            errs.append(required(f"{uat}.counterSet"))
        _counters(use.get("counters"), f"{uat}.counters", errs)
    c.binding_parameters(device, at, errs)


def _counters(value: Any, path: str, errs: list[FieldError]) -> None:
    counters = as_dict(value, path, errs)
    if value is None:
        errs.append(required(path))
    if len(counters) > COUNTERS_MAX:
        errs.append(too_many(path, len(counters), COUNTERS_MAX))
    for name, counter in counters.items():
        add_invalid(errs, f"{path}[{name}]", name, names.is_dns1123_label(name))
        if as_dict(counter, f"{path}[{name}]", errs).get("value") is None:
            errs.append(required(f"{path}[{name}].value"))


def validate_resource_slice(obj: Obj) -> list[FieldError]:
    errs = validate_object_meta(
        obj["metadata"], namespaced=False, name_fn=names.name_is_dns_subdomain
    )
    spec = as_dict(obj.get("spec"), "spec", errs)
    errs.extend(c.validate_driver_name(spec.get("driver", ""), "spec.driver"))
    pool = as_dict(spec.get("pool"), "spec.pool", errs)
    c.pool_name(pool.get("name"), "spec.pool.name", errs)
    for key, minimum in (("generation", 0), ("resourceSliceCount", 1)):
        value = pool.get(key, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            detail = (
                "must be greater than or equal to 0"
                if minimum == 0
                else "must be greater than zero"
            )
            errs.append(invalid(f"spec.pool.{key}", value, detail))
    chosen = _one_of(spec, NODE_SELECTION, "spec", errs)
    _node_selection(spec, "spec", errs)
    devices = c.items(spec.get("devices"), "spec.devices", errs, DEVICES_MAX)
    c.unique_names(devices, errs)
    limited = any(
        isinstance(d, dict) and (d.get("taints") or d.get("consumesCounters"))
        for _, d, _ in devices
    )
    if limited and len(devices) > DEVICES_MAX_WITH_TAINTS_OR_COUNTERS:
        errs.append(too_many("spec.devices", len(devices), DEVICES_MAX_WITH_TAINTS_OR_COUNTERS))
    for _, device, at in devices:
        _device(device, at, chosen == ["perDeviceNodeSelection"], errs)
    sets = c.items(spec.get("sharedCounters"), "spec.sharedCounters", errs, COUNTER_SETS_MAX)
    c.unique_names(sets, errs)
    for _, counter_set, at in sets:
        _counters(as_dict(counter_set, at, errs).get("counters"), f"{at}.counters", errs)
    if devices and sets:
        errs.append(
            invalid(
                "spec",
                None,
                "exactly one of `devices` or `sharedCounters` may be set, but both are",
            )
        )
    return errs


def validate_resource_slice_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    spec, old_spec = field_dict(obj, "spec"), field_dict(old, "spec")
    errs.extend(immutable("spec.driver", spec.get("driver"), old_spec.get("driver")))
    errs.extend(
        immutable(
            "spec.pool.name",
            field_dict(spec, "pool").get("name"),
            field_dict(old_spec, "pool").get("name"),
        )
    )
    errs.extend(immutable("spec.nodeName", spec.get("nodeName"), old_spec.get("nodeName")))
    errs.extend(validate_resource_slice(obj))
    return errs


# --- DeviceTaintRule ----------------------------------------------------------------------


def validate_device_taint_rule(obj: Obj) -> list[FieldError]:
    errs = validate_object_meta(
        obj["metadata"], namespaced=False, name_fn=names.name_is_dns_subdomain
    )
    spec = as_dict(obj.get("spec"), "spec", errs)
    selector = as_dict(spec.get("deviceSelector"), "spec.deviceSelector", errs)
    if selector.get("driver") is not None:
        errs.extend(c.validate_driver_name(selector["driver"], "spec.deviceSelector.driver"))
    if selector.get("pool") is not None:
        c.pool_name(selector["pool"], "spec.deviceSelector.pool", errs)
    if selector.get("device") is not None:
        device = as_str(selector["device"], "spec.deviceSelector.device", errs)
        add_invalid(errs, "spec.deviceSelector.device", device, names.is_dns1123_label(device))
    if spec.get("taint") is None:
        errs.append(required("spec.taint"))
    else:
        c.taint(spec["taint"], "spec.taint", errs)
    return errs


def validate_device_taint_rule_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(validate_device_taint_rule(obj))
    return errs
