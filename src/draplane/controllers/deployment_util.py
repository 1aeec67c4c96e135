"""The Deployment controller's pure helpers (pkg/controller/deployment/util): the
pod-template-hash, maxSurge/maxUnavailable, which ReplicaSet is new, revisions and the
annotations copied into ReplicaSets.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.clock import parse_time
from draplane.controllers.controller_utils import fnv32a, safe_encode_string, scaled_value

DEFAULT_UNIQUE_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
ROLLBACK_TO = "deprecated.deployment.rollback.to"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
CHANGE_CAUSE = "kubernetes.io/change-cause"
REV_HISTORY_LIMIT_IN_CHARS = 2000
MAX_INT32 = 2**31 - 1
_SKIP_COPY = frozenset(
    (LAST_APPLIED, REVISION, REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS, ROLLBACK_TO)
)


def compute_hash(template: Obj, collision_count: int | None) -> str:
    """FNV-1a over the template (its canonical JSON here; upstream hashes a Go dump), then the
    collision count as 8 little-endian bytes when set, as a decimal string in the safe alphabet."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    value = fnv32a(data)
    if collision_count is not None:
        value = fnv32a((collision_count & 0xFFFFFFFF).to_bytes(8, "little"), value)
    return safe_encode_string(str(value))


def spec(obj: Obj) -> Obj:
    return obj.get("spec") or {}


def status(obj: Obj) -> Obj:
    return obj.get("status") or {}


def replicas(obj: Obj) -> int:
    """`spec.replicas` (defaulted to 1 by the API server)."""
    value = spec(obj).get("replicas")
    return 1 if value is None else int(value)


def is_rolling_update(d: Obj) -> bool:
    return bool((spec(d).get("strategy") or {}).get("type", "RollingUpdate") == "RollingUpdate")


def resolve_fenceposts(d: Obj) -> tuple[int, int]:
    """(maxSurge rounded up, maxUnavailable rounded down); both 0 makes maxUnavailable 1."""
    rolling = (spec(d).get("strategy") or {}).get("rollingUpdate") or {}
    desired = replicas(d)
    surge = scaled_value(rolling.get("maxSurge"), desired, round_up=True, default="25%")
    unavailable = scaled_value(
        rolling.get("maxUnavailable"), desired, round_up=False, default="25%"
    )
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_surge(d: Obj) -> int:
    return resolve_fenceposts(d)[0] if is_rolling_update(d) else 0


def max_unavailable(d: Obj) -> int:
    if not is_rolling_update(d) or replicas(d) == 0:
        return 0
    return min(resolve_fenceposts(d)[1], replicas(d))


def _drop_empty(value: object) -> object:
    if isinstance(value, dict):
        out = {k: _drop_empty(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, {}, [])}
    if isinstance(value, list):
        return [_drop_empty(v) for v in value]
    return value


def template_without_hash(template: Obj) -> Obj:
    copy = meta.deep_copy(template)
    labels = (copy.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(DEFAULT_UNIQUE_LABEL, None)
    return copy


def equal_ignore_hash(a: Obj, b: Obj) -> bool:
    """Templates equal but for the pod-template-hash label (EqualIgnoreHash)."""
    return _drop_empty(template_without_hash(a)) == _drop_empty(template_without_hash(b))


def creation_key(obj: Obj) -> tuple[float, str]:
    stamp = meta.metadata(obj).get("creationTimestamp")
    return (parse_time(str(stamp)).timestamp() if stamp else 0.0, meta.name(obj))


def by_creation(rss: Sequence[Obj]) -> list[Obj]:
    return sorted(rss, key=creation_key)


def find_new_replica_set(d: Obj, rss: Sequence[Obj]) -> Obj | None:
    """The oldest ReplicaSet whose template equals the Deployment's."""
    template = spec(d).get("template") or {}
    for rs in by_creation(rss):
        if equal_ignore_hash(spec(rs).get("template") or {}, template):
            return rs
    return None


def revision(obj: Obj) -> int:
    try:
        return int(meta.annotations(obj).get(REVISION, "0"))
    except ValueError:
        return 0


def max_revision(rss: Sequence[Obj]) -> int:
    return max((revision(rs) for rs in rss), default=0)


def last_revision(rss: Sequence[Obj]) -> int:
    """The second highest revision (LastRevision), for a rollback to 0."""
    revisions = sorted({revision(rs) for rs in rss}, reverse=True)
    return revisions[1] if len(revisions) > 1 else 0


def _copy_annotations(d: Obj, rs: Obj) -> bool:
    changed = False
    annotations = rs["metadata"].setdefault("annotations", {})
    for k, v in meta.annotations(d).items():
        if k in _SKIP_COPY or annotations.get(k) == v:
            continue
        annotations[k] = v
        changed = True
    return changed


def set_replicas_annotations(rs: Obj, desired: int, max_replicas: int) -> bool:
    annotations = rs["metadata"].setdefault("annotations", {})
    changed = False
    for k, v in ((DESIRED_REPLICAS, str(desired)), (MAX_REPLICAS, str(max_replicas))):
        if annotations.get(k) != v:
            annotations[k] = v
            changed = True
    return changed


def set_new_replica_set_annotations(d: Obj, rs: Obj, new_revision: int, *, exists: bool) -> bool:
    """SetNewReplicaSetAnnotations: copy the Deployment's annotations, raise the revision (a
    raised revision moves the old one to revision-history), and on create the replica counts."""
    changed = _copy_annotations(d, rs)
    annotations = rs["metadata"]["annotations"]
    old_text = annotations.get(REVISION)
    try:
        old = int(old_text) if old_text else 0
    except ValueError:
        return changed
    if old < new_revision:
        annotations[REVISION] = str(new_revision)
        changed = True
        if old_text:
            history = annotations.get(REVISION_HISTORY, "")
            entries = history.split(",") if history else []
            total = len(history) + len(old_text) + 1
            start = 0
            while total > REV_HISTORY_LIMIT_IN_CHARS and start < len(entries):
                total -= len(entries[start]) + 1
                start += 1
            if total <= REV_HISTORY_LIMIT_IN_CHARS:
                annotations[REVISION_HISTORY] = ",".join([*entries[start:], old_text])
    if not exists and set_replicas_annotations(rs, replicas(d), replicas(d) + max_surge(d)):
        changed = True
    return changed


def copyable_annotations(d: Obj, rs: Obj) -> dict[str, str]:
    """The Deployment's annotations after a rollback to `rs`: its own skipped ones kept, the
    rest taken from the ReplicaSet (setDeploymentAnnotationsTo)."""
    kept = {k: v for k, v in meta.annotations(d).items() if k in _SKIP_COPY}
    return kept | {k: v for k, v in meta.annotations(rs).items() if k not in _SKIP_COPY}


def desired_replicas_annotation(rs: Obj) -> int | None:
    try:
        return int(meta.annotations(rs)[DESIRED_REPLICAS])
    except (KeyError, ValueError):
        return None


def max_replicas_annotation(rs: Obj) -> int | None:
    try:
        return int(meta.annotations(rs)[MAX_REPLICAS])
    except (KeyError, ValueError):
        return None


def new_replica_set_name(d: Obj, pod_hash: str) -> str:
    prefix = meta.name(d)[: 253 - 1 - len(pod_hash)]
    return f"{prefix}-{pod_hash}"


def new_replica_set(d: Obj, pod_hash: str, new_replicas: int, new_revision: int) -> Obj:
    """The new ReplicaSet for `d` (getNewReplicaSet's create branch)."""
    template = meta.deep_copy(spec(d).get("template") or {})
    template.setdefault("metadata", {}).setdefault("labels", {})[DEFAULT_UNIQUE_LABEL] = pod_hash
    selector = meta.deep_copy(spec(d).get("selector") or {})
    selector.setdefault("matchLabels", {})[DEFAULT_UNIQUE_LABEL] = pod_hash
    rs: Obj = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": new_replica_set_name(d, pod_hash),
            "namespace": meta.namespace(d),
            "ownerReferences": [meta.owner_reference(d, block_owner_deletion=True)],
            "labels": dict(template["metadata"]["labels"]),
        },
        "spec": {
            "replicas": new_replicas,
            "minReadySeconds": int(spec(d).get("minReadySeconds") or 0),
            "selector": selector,
            "template": template,
        },
    }
    set_new_replica_set_annotations(d, rs, new_revision, exists=False)
    return rs
