"""Strategies of the core/v1 and coordination.k8s.io kinds: pods, namespaces, nodes, events,
config maps, service accounts and leases (pkg/registry/core/*/strategy.go)."""

from __future__ import annotations

from draplane.api import fieldselector, kinds
from draplane.api.meta import Obj
from draplane.api.validation import core, defaults, pod, podstatus
from draplane.apiserver import printers
from draplane.apiserver.strategies import ResourceStrategy
from draplane.apiserver.strategies.subresources import bind_pod, request_token


def _prepare_pod(obj: Obj) -> None:
    status = obj.get("status") or {}
    if not isinstance(status, dict):
        status = {}
    obj["status"] = {"phase": "Pending", "qosClass": status.get("qosClass", "BestEffort")}


def _prepare_namespace(obj: Obj) -> None:
    obj["status"] = {"phase": "Active"}


def pod_grace_period(obj: Obj, requested: int | None) -> int:
    """Delete grace period for a pod: 0 when unscheduled or finished, else requested/spec."""
    spec = obj.get("spec") or {}
    phase = (obj.get("status") or {}).get("phase")
    if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
        return 0
    if requested is not None:
        return max(0, requested)
    return int(spec.get("terminationGracePeriodSeconds", 30))


STRATEGIES = (
    ResourceStrategy(
        kinds.PODS,
        validate_typed=pod.validate_pod_create,
        validate_update_typed=pod.validate_pod_update,
        validate_status=podstatus.validate_pod_status_update,
        defaults=defaults.default_pod,
        printer=printers.POD,
        fields=fieldselector.POD_FIELDS,
        prepare_for_create=_prepare_pod,
        grace_period=pod_grace_period,
        delete_returns_object=True,
        subresource_create={"binding": bind_pod},
    ),
    ResourceStrategy(
        kinds.NAMESPACES,
        validate=core.validate_namespace,
        validate_update=core.validate_namespace_update,
        validate_status=core.validate_namespace_status_update,
        defaults=defaults.default_namespace,
        printer=printers.NAMESPACE,
        fields=fieldselector.NAMESPACE_FIELDS,
        prepare_for_create=_prepare_namespace,
    ),
    ResourceStrategy(
        kinds.NODES,
        validate=core.validate_node,
        validate_update=core.validate_node_update,
        validate_status=core.validate_node_status_update,
        defaults=defaults.default_node,
        printer=printers.NODE,
        fields=fieldselector.NODE_FIELDS,
    ),
    ResourceStrategy(
        kinds.EVENTS,
        validate=core.validate_event,
        validate_update=core.validate_event_update,
        defaults=defaults.default_event,
        printer=printers.EVENT,
        fields=fieldselector.EVENT_FIELDS,
        has_dependents=False,
    ),
    ResourceStrategy(
        kinds.CONFIGMAPS,
        validate=core.validate_config_map,
        validate_update=core.validate_config_map_update,
        printer=printers.CONFIG_MAP,
    ),
    ResourceStrategy(
        kinds.LEASES,
        validate=core.validate_lease,
        validate_update=core.validate_lease_update,
        defaults=defaults.default_lease,
        printer=printers.LEASE,
    ),
    ResourceStrategy(
        kinds.SERVICE_ACCOUNTS,
        delete_returns_object=True,
        subresource_create={"token": request_token},
    ),
)
