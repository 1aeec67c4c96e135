"""Objects the StatefulSet and DaemonSet controller tables share: sets, their revisions and pods
in each state, built from the pod and node builders."""

from __future__ import annotations

from typing import Any

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.controllers.history import new_revision, template_data
from draplane.controllers.statefulset_plan import POD_INDEX_LABEL, POD_NAME_LABEL
from draplane.testing.builders import PodBuilder, make_pod
from draplane.testing.workloadbuilders import make_stateful_set

NOW = "2026-01-01T00:10:00Z"
EARLIER = "2026-01-01T00:00:00Z"


def template(image: str = "app:1") -> Obj:
    """The pod template of `statefulset()` (and of the DaemonSet tables) with `image`."""
    tmpl: Obj = make_stateful_set("x").image(image).obj()["spec"]["template"]
    return tmpl


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
    """StatefulSet `name` selecting `app=x`, as the defaulted API object would have it."""
    builder = (
        make_stateful_set(name)
        .uid(f"{name}-uid")
        .set("metadata.generation", 1)
        .selector({"app": "x"})
        .template_labels({"app": "x"})
        .image(image)
        .replicas(replicas)
        .pod_management_policy(policy)
        .set(
            "spec.updateStrategy",
            strategy or {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
        )
    )
    if start is not None:
        builder.set("spec.ordinals", {"start": start})
    if min_ready:
        builder.min_ready_seconds(min_ready)
    if status is not None:
        builder.status(**status)
    for key, value in spec.items():
        builder.set(f"spec.{key}", value)
    return builder.obj()


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
