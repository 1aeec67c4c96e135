"""Objects the StatefulSet and DaemonSet controller tables share: sets, their revisions and pods
in each state, built from the pod and node builders."""

from __future__ import annotations

from typing import Any

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.controllers.history import new_revision, template_data
from draplane.controllers.statefulset_plan import POD_INDEX_LABEL, POD_NAME_LABEL
from draplane.testing.builders import PodBuilder, make_pod

NOW = "2026-01-01T00:10:00Z"
EARLIER = "2026-01-01T00:00:00Z"


def template(image: str = "app:1", *, labels: dict[str, str] | None = None) -> Obj:
    return {
        "metadata": {"labels": labels or {"app": "x"}},
        "spec": {"containers": [{"name": "app", "image": image}]},
    }


def statefulset(
    name: str = "x",
    *,
    replicas: int = 3,
    image: str = "app:1",
    policy: str = "OrderedReady",
    strategy: Obj | None = None,
    start: int | None = None,
    status: Obj | None = None,
    min_ready: int = 0,
    **spec: Any,
) -> Obj:
    body: Obj = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "default", "uid": f"{name}-uid", "generation": 1},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "podManagementPolicy": policy,
            "selector": {"matchLabels": {"app": "x"}},
            "template": template(image),
            "updateStrategy": strategy
            or {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            **spec,
        },
    }
    if start is not None:
        body["spec"]["ordinals"] = {"start": start}
    if min_ready:
        body["spec"]["minReadySeconds"] = min_ready
    if status is not None:
        body["status"] = status
    return body


def revision(set_: Obj, image: str, number: int = 1) -> Obj:
    """The ControllerRevision `set_` would have for its template with `image`."""
    rev = new_revision(
        set_,
        template_data(template(image)),
        revision=number,
        collision_count=0,
        labels={"app": "x"},
    )
    rev["metadata"]["uid"] = f"{meta.name(rev)}-uid"
    return rev


def member(
    set_: Obj,
    ordinal: int,
    *,
    rev: Obj,
    state: str = "ready",
    ready_since: str = EARLIER,
    kind: str = "StatefulSet",
) -> Obj:
    """Pod `<set>-<ordinal>` at revision `rev`: ready, pending, failed, succeeded, terminating."""
    name = f"{meta.name(set_)}-{ordinal}"
    builder: PodBuilder = (
        make_pod(name)
        .label("app", "x")
        .label(POD_NAME_LABEL, name)
        .label(POD_INDEX_LABEL, str(ordinal))
        .label("controller-revision-hash", meta.name(rev))
        .owner(kind, meta.name(set_), meta.uid(set_), api_version="apps/v1")
    )
    return with_state(builder, state, ready_since=ready_since).obj()


def with_state(builder: PodBuilder, state: str, *, ready_since: str = EARLIER) -> PodBuilder:
    if state in ("ready", "terminating"):
        builder.phase("Running").set(
            "status.conditions",
            [{"type": "Ready", "status": "True", "lastTransitionTime": ready_since}],
        )
    elif state == "pending":
        builder.phase("Pending")
    elif state == "unready":
        builder.phase("Running").condition("Ready", "False")
    elif state == "failed":
        builder.phase("Failed")
    elif state == "succeeded":
        builder.phase("Succeeded")
    if state == "terminating":
        builder.deletion_timestamp()
    return builder
