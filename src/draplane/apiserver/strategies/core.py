"""Strategies of the core/v1 and coordination.k8s.io kinds: pods, namespaces, nodes, events,
config maps, service accounts and leases (pkg/registry/core/*/strategy.go)."""

from __future__ import annotations

from draplane.api import kinds
from draplane.api.meta import Obj
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
        prepare_for_create=_prepare_pod,
        grace_period=pod_grace_period,
        delete_returns_object=True,
        subresource_create={"binding": bind_pod},
    ),
    ResourceStrategy(
        kinds.NAMESPACES,
        prepare_for_create=_prepare_namespace,
    ),
    ResourceStrategy(
        kinds.NODES,
    ),
    ResourceStrategy(
        kinds.EVENTS,
        has_dependents=False,
    ),
    ResourceStrategy(kinds.CONFIGMAPS),
    ResourceStrategy(kinds.LEASES),
    ResourceStrategy(
        kinds.SERVICE_ACCOUNTS,
        delete_returns_object=True,
        subresource_create={"token": request_token},
    ),
)
