"""Small Deployment, ReplicaSet and pod values for the pure workload-controller tables."""

from __future__ import annotations

from typing import Any

from draplane.api.meta import Obj
from draplane.controllers.deployment_util import DESIRED_REPLICAS, MAX_REPLICAS, REVISION

TEMPLATE: Obj = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {"containers": [{"name": "c", "image": "nginx:1"}], "restartPolicy": "Always"},
}


def deployment(
    replicas: int = 3,
    *,
    surge: int | str | None = None,
    unavailable: int | str | None = None,
    strategy: str = "RollingUpdate",
    generation: int = 1,
    status: Obj | None = None,
    deadline: int | None = 600,
    **spec: Any,
) -> Obj:
    rolling: Obj = {}
    if surge is not None:
        rolling["maxSurge"] = surge
    if unavailable is not None:
        rolling["maxUnavailable"] = unavailable
    strategy_obj: Obj = {"type": strategy}
    if strategy == "RollingUpdate":
        strategy_obj["rollingUpdate"] = rolling
    body: Obj = {
        "replicas": replicas,
        "selector": {"matchLabels": {"app": "web"}},
        "template": TEMPLATE,
        "strategy": strategy_obj,
        **spec,
    }
    if deadline is not None:
        body["progressDeadlineSeconds"] = deadline
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "uid": "d-uid",
            "generation": generation,
        },
        "spec": body,
        "status": status or {},
    }


def replica_set(
    name: str,
    replicas: int,
    *,
    available: int = 0,
    created: int = 0,
    desired: int | None = None,
    max_replicas: int | None = None,
    revision: int | None = None,
    image: str = "nginx:1",
    **status: Any,
) -> Obj:
    annotations = {}
    if desired is not None:
        annotations[DESIRED_REPLICAS] = str(desired)
    if max_replicas is not None:
        annotations[MAX_REPLICAS] = str(max_replicas)
    if revision is not None:
        annotations[REVISION] = str(revision)
    template = {
        "metadata": {"labels": {"app": "web", "pod-template-hash": name}},
        "spec": {"containers": [{"name": "c", "image": image}], "restartPolicy": "Always"},
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"{name}-uid",
            "creationTimestamp": f"2026-01-01T00:{created:02d}:00Z",
            "annotations": annotations,
        },
        "spec": {"replicas": replicas, "template": template},
        "status": {"replicas": replicas, "availableReplicas": available, **status},
    }


def pod(
    name: str,
    *,
    node: str = "",
    phase: str = "Running",
    ready: bool = True,
    ready_at: str = "2026-01-01T00:00:00Z",
    created: str = "2026-01-01T00:00:00Z",
    cost: int | None = None,
    restarts: int = 0,
    labels: dict[str, str] | None = None,
) -> Obj:
    md: Obj = {
        "name": name,
        "namespace": "default",
        "uid": f"{name}-uid",
        "creationTimestamp": created,
        "labels": labels if labels is not None else {"app": "web"},
    }
    if cost is not None:
        md["annotations"] = {"controller.kubernetes.io/pod-deletion-cost": str(cost)}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": md,
        "spec": {"nodeName": node} if node else {},
        "status": {
            "phase": phase,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True" if ready else "False",
                    "lastTransitionTime": ready_at,
                }
            ],
            "containerStatuses": [{"name": "c", "restartCount": restarts}],
        },
    }
