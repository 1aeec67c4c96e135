"""LimitRanger (plugin/pkg/admission/limitranger): the LimitRanges of a namespace default and
bound what its new pods ask for.

Mutating: a pod created without a request or limit of a resource its namespace's
`Container` limits default gets `defaultRequest` / `default` (and the annotation
`kubernetes.io/limit-ranger: LimitRanger plugin set: ...`). Validating: each container's (and
init container's) requests and limits must respect a `Container` item's `min`, `max` and
`maxLimitRequestRatio`, the pod's total requests and limits a `Pod` item's, and a
PersistentVolumeClaim's storage request a `PersistentVolumeClaim` item's `min` and `max`;
otherwise 403 with upstream's messages (`maximum cpu usage per Container is 2, but limit is
3`). Pod updates are not checked (containers' resources cannot change).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

from draplane.api import kinds, quota
from draplane.api.meta import Obj
from draplane.api.quantity import parse_quantity
from draplane.api.quotausage import pod_resources
from draplane.apiserver.admission import AdmissionAttributes, forbidden
from draplane.storage.interface import Storage

ANNOTATION = "kubernetes.io/limit-ranger"
Resources = dict[str, str]


def _q(value: Any) -> Fraction | None:
    try:
        return parse_quantity(value)
    except ValueError:
        return None


def _min(kind: str, name: str, enforced: str, requests: Resources, limits: Resources) -> str:
    want = parse_quantity(enforced)
    if name not in requests:
        return f"minimum {name} usage per {kind} is {enforced}.  No request is specified"
    if (_q(requests[name]) or 0) < want:
        return f"minimum {name} usage per {kind} is {enforced}, but request is {requests[name]}"
    if name in limits and (_q(limits[name]) or 0) < want:
        return f"minimum {name} usage per {kind} is {enforced}, but limit is {limits[name]}"
    return ""


def _max(kind: str, name: str, enforced: str, requests: Resources, limits: Resources) -> str:
    want = parse_quantity(enforced)
    if name not in limits:
        return f"maximum {name} usage per {kind} is {enforced}.  No limit is specified"
    if (_q(limits[name]) or 0) > want:
        return f"maximum {name} usage per {kind} is {enforced}, but limit is {limits[name]}"
    if name in requests and (_q(requests[name]) or 0) > want:
        return f"maximum {name} usage per {kind} is {enforced}, but request is {requests[name]}"
    return ""


def _max_request(kind: str, name: str, enforced: str, requests: Resources, _: Resources) -> str:
    if name in requests and (_q(requests[name]) or 0) > parse_quantity(enforced):
        return f"maximum {name} usage per {kind} is {enforced}, but request is {requests[name]}"
    return ""


def _ratio(kind: str, name: str, enforced: str, requests: Resources, limits: Resources) -> str:
    request, limit = _q(requests.get(name)), _q(limits.get(name))
    prefix = f"{name} max limit to request ratio per {kind} is {enforced}"
    if not request:
        return f"{prefix}, but no request is specified or request is 0"
    if not limit:
        return f"{prefix}, but no limit is specified or limit is 0"
    if limit / request > parse_quantity(enforced):
        return f"{prefix}, but provided ratio is {float(limit / request):f}"
    return ""


Constraint = Callable[[str, str, str, Resources, Resources], str]


def _check(item: Obj, kind: str, requests: Resources, limits: Resources, *, pvc: bool) -> list[str]:
    checks: list[tuple[str, Constraint]] = [("min", _min), ("max", _max_request if pvc else _max)]
    if not pvc:
        checks.append(("maxLimitRequestRatio", _ratio))
    errs: list[str] = []
    for field, constraint in checks:
        for name, enforced in sorted((item.get(field) or {}).items()):
            message = constraint(kind, name, str(enforced), requests, limits)
            if message:
                errs.append(message)
    return errs


def _containers(pod: Obj) -> list[tuple[str, Obj]]:
    spec = pod.get("spec") or {}
    return [
        *(("container", c) for c in spec.get("containers") or [] if isinstance(c, dict)),
        *(("init container", c) for c in spec.get("initContainers") or [] if isinstance(c, dict)),
    ]


def _resources(ctr: Obj) -> tuple[Resources, Resources]:
    res = ctr.get("resources") or {}
    return dict(res.get("requests") or {}), dict(res.get("limits") or {})


class LimitRanger:
    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    async def _items(self, a: AdmissionAttributes, kind: str) -> list[Obj]:
        if a.operation != "CREATE" or a.subresource or a.obj is None:
            return []
        if a.rt not in (kinds.PODS, kinds.PERSISTENT_VOLUME_CLAIMS):
            return []
        ranges, _ = await self._storage.list(kinds.LIMIT_RANGES.key, a.namespace)
        return [
            item
            for lr in ranges
            for item in (lr.get("spec") or {}).get("limits") or []
            if isinstance(item, dict) and item.get("type") == kind
        ]

    async def admit(self, a: AdmissionAttributes) -> None:
        if a.rt is not kinds.PODS:
            return
        items = await self._items(a, "Container")
        if not items or a.obj is None:
            return
        default_requests: Resources = {}
        default_limits: Resources = {}
        for item in items:
            default_requests.update(item.get("defaultRequest") or {})
            default_limits.update(item.get("default") or {})
        notes: list[str] = []
        for prefix, ctr in _containers(a.obj):
            # Runs before validation: a null `resources` (or requests) is an empty one.
            if not isinstance(ctr.get("resources"), dict):
                ctr["resources"] = {}
            res = ctr["resources"]
            for field, defaults, word in (
                ("requests", default_requests, "request"),
                ("limits", default_limits, "limit"),
            ):
                if not isinstance(res.get(field), dict):
                    res[field] = {}
                values = res[field]
                added = sorted(n for n in defaults if n not in values)
                for name in added:
                    values[name] = defaults[name]
                if not values:
                    res.pop(field)
                if added:
                    notes.append(f"{', '.join(added)} {word} for {prefix} {ctr.get('name', '')}")
        if notes:
            md = a.obj["metadata"]
            if not isinstance(md.get("annotations"), dict):
                md["annotations"] = {}
            md["annotations"][ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)

    async def validate(self, a: AdmissionAttributes) -> None:
        if a.obj is None:
            return
        errs: list[str] = []
        if a.rt is kinds.PODS:
            for item in await self._items(a, "Container"):
                for _, ctr in _containers(a.obj):
                    errs.extend(_check(item, "Container", *_resources(ctr), pvc=False))
            for item in await self._items(a, "Pod"):
                requests = quota.format_list(pod_resources(a.obj, "requests"))
                limits = quota.format_list(pod_resources(a.obj, "limits"))
                errs.extend(_check(item, "Pod", requests, limits, pvc=False))
        elif a.rt is kinds.PERSISTENT_VOLUME_CLAIMS:
            requests = dict(
                ((a.obj.get("spec") or {}).get("resources") or {}).get("requests") or {}
            )
            for item in await self._items(a, "PersistentVolumeClaim"):
                errs.extend(_check(item, "PersistentVolumeClaim", requests, {}, pvc=True))
        if errs:
            raise forbidden(a, errs[0] if len(errs) == 1 else f"[{', '.join(errs)}]")
