"""What an object charges to a ResourceQuota, per kind (pkg/quota/v1/evaluator/core).

Each function returns the object's usage as exact quantities by quota resource name: a pod's
object count, its compute requests and limits (PodRequests/PodLimits: containers summed,
sidecars added, the largest init container, the overhead) and its extended resources as
`requests.<name>`, none of it but the count once the pod is terminal or past its grace period;
a Service's counts, node ports and load balancers; a PersistentVolumeClaim's counts and storage
(also per storage class); a ResourceClaim's devices per class as the 1.34-1.36 evaluator counts
them (an exact count, `All` as the 32 devices an allocation holds at most, a `firstAvailable`
request as its largest alternative per class; admin access is charged too), and a 1.28 claim
as one claim of its ResourceClass.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from fractions import Fraction
from typing import Any

from draplane.api.meta import Obj
from draplane.api.quantity import parse_quantity
from draplane.api.validation.quota import is_extended
from draplane.clock import parse_time

Usage = dict[str, Fraction]


@dataclass(frozen=True)
class UsageContext:
    """What an evaluator needs besides the object: the time (a pod past its grace period no
    longer counts) and the extended resource each DeviceClass serves (1.36 claims)."""

    now: datetime
    extended_resources: Mapping[str, str] = field(default_factory=dict)
    """DeviceClass name -> its `spec.extendedResourceName`."""


def extended_resources(classes: list[Obj]) -> dict[str, str]:
    """The `spec.extendedResourceName` of each DeviceClass that has one, by class name."""
    out: dict[str, str] = {}
    for cls in classes:
        name = ((cls.get("spec") or {}).get("extendedResourceName")) or ""
        if name:
            out[str((cls.get("metadata") or {}).get("name") or "")] = str(name)
    return out


ALLOCATION_RESULTS_MAX_SIZE = 32
DEVICES_PER_CLASS = ".deviceclass.resource.k8s.io/devices"
CLAIMS_PER_RESOURCE_CLASS = ".resourceclass.resource.k8s.io/resourceclaims"
IMPLICIT_EXTENDED_PER_CLASS = "requests.deviceclass.resource.kubernetes.io/"
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
STORAGE_CLASS_SUFFIX = ".storageclass.storage.k8s.io/"
_COMPUTE = ("cpu", "memory", "ephemeral-storage")


def _quantities(values: Any) -> Usage:
    out: Usage = {}
    if isinstance(values, dict):
        for name, raw in values.items():
            try:
                out[str(name)] = parse_quantity(raw)
            except ValueError:
                continue
    return out


def _add_into(total: Usage, more: Usage) -> None:
    for name, value in more.items():
        total[name] = total.get(name, Fraction(0)) + value


def _max_into(total: Usage, other: Usage) -> None:
    for name, value in other.items():
        if value > total.get(name, Fraction(0)):
            total[name] = value


def pod_resources(pod: Obj, field: str) -> Usage:
    """resourcehelper.PodRequests / PodLimits: regular containers and sidecars summed, the
    largest init container (with the sidecars started before it), the overhead."""
    spec = pod.get("spec") or {}
    total: Usage = {}
    for ctr in spec.get("containers") or []:
        _add_into(total, _quantities((ctr.get("resources") or {}).get(field)))
    sidecars: Usage = {}
    init_max: Usage = {}
    for ctr in spec.get("initContainers") or []:
        own = _quantities((ctr.get("resources") or {}).get(field))
        if ctr.get("restartPolicy") == "Always":
            _add_into(sidecars, own)
            _add_into(total, own)
            continue
        with_sidecars = dict(own)
        _add_into(with_sidecars, sidecars)
        _max_into(init_max, with_sidecars)
    _max_into(total, init_max)
    _add_into(total, _quantities(spec.get("overhead")))
    return total


def pod_is_live(pod: Obj, now: datetime) -> bool:
    """QuotaV1Pod: a pod's compute resources count until it is terminal or past its grace."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    md = pod.get("metadata") or {}
    stamp, grace = md.get("deletionTimestamp"), md.get("deletionGracePeriodSeconds")
    if stamp and grace is not None:
        return now <= parse_time(str(stamp)) + timedelta(seconds=int(grace))
    return True


def pod_usage(pod: Obj, ctx: UsageContext) -> Usage:
    result: Usage = {"count/pods": Fraction(1)}
    if not pod_is_live(pod, ctx.now):
        return result
    requests, limits = pod_resources(pod, "requests"), pod_resources(pod, "limits")
    result["pods"] = Fraction(1)
    for name in _COMPUTE:
        if name in requests:
            result[name] = result[f"requests.{name}"] = requests[name]
        if name in limits:
            result[f"limits.{name}"] = limits[name]
    for name, value in requests.items():
        if name.startswith("hugepages-"):
            result[name] = result[f"requests.{name}"] = value
        elif is_extended(name):
            result[f"requests.{name}"] = value
    return result


def pod_is_best_effort(pod: Obj) -> bool:
    spec = pod.get("spec") or {}
    for ctr in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        resources = ctr.get("resources") or {}
        for kind in ("requests", "limits"):
            if any(k in ("cpu", "memory") for k in resources.get(kind) or {}):
                return False
    return True


def service_usage(svc: Obj) -> Usage:
    spec = svc.get("spec") or {}
    ports = Fraction(len(spec.get("ports") or []))
    result: Usage = {
        "count/services": Fraction(1),
        "services": Fraction(1),
        "services.loadbalancers": Fraction(0),
        "services.nodeports": Fraction(0),
    }
    if spec.get("type") == "NodePort":
        result["services.nodeports"] = ports
    elif spec.get("type") == "LoadBalancer":
        result["services.loadbalancers"] = Fraction(1)
        if spec.get("allocateLoadBalancerNodePorts") is not False:
            result["services.nodeports"] = ports
    return result


def persistent_volume_claim_usage(pvc: Obj) -> Usage:
    spec = pvc.get("spec") or {}
    result: Usage = {
        "count/persistentvolumeclaims": Fraction(1),
        "persistentvolumeclaims": Fraction(1),
    }
    storage = _quantities((spec.get("resources") or {}).get("requests")).get("storage")
    klass = spec.get("storageClassName")
    if klass:
        result[f"{klass}{STORAGE_CLASS_SUFFIX}persistentvolumeclaims"] = Fraction(1)
    if storage is not None:
        result["requests.storage"] = storage
        if klass:
            result[f"{klass}{STORAGE_CLASS_SUFFIX}requests.storage"] = storage
    return result


def _devices(request: Obj) -> tuple[str, Fraction]:
    """The class a request (or subrequest) names and the most devices it may get."""
    mode = request.get("allocationMode") or "ExactCount"
    if mode == "ExactCount":
        count = Fraction(int(request.get("count") or 1))
    elif mode == "All":
        count = Fraction(ALLOCATION_RESULTS_MAX_SIZE)
    else:  # an unknown mode (after a downgrade) is not charged
        count = Fraction(0)
    return str(request.get("deviceClassName") or ""), count


def _claim_requests(claim: Obj) -> list[Usage]:
    """Per request, the devices by class name it may be allocated (its worst case)."""
    out: list[Usage] = []
    for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
        if not isinstance(request, dict):
            continue
        if request.get("firstAvailable"):
            largest: Usage = {}
            for sub in request["firstAvailable"]:
                klass, count = _devices(sub if isinstance(sub, dict) else {})
                _max_into(largest, {klass: count})
                largest.setdefault(klass, Fraction(0))
            out.append(largest)
        elif isinstance(request.get("exactly"), dict):
            klass, count = _devices(request["exactly"])
            out.append({klass: count})
        elif request.get("deviceClassName"):  # the v1beta1 shape
            klass, count = _devices(request)
            out.append({klass: count})
    return out


def structured_claim_usage(claim: Obj, ctx: UsageContext) -> Usage:
    """resource.k8s.io/v1 ResourceClaim (1.34-1.36): its object count and, per device class,
    `<class>.deviceclass.resource.k8s.io/devices` and (DRAExtendedResource) the implicit
    extended resource `requests.deviceclass.resource.kubernetes.io/<class>` and the class's
    own `requests.<extendedResourceName>`, both of which a claim the scheduler made for a pod's
    extended resources leaves to the pod."""
    result: Usage = {"count/resourceclaims.resource.k8s.io": Fraction(1)}
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    for_pod = annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) == "true"
    for request in _claim_requests(claim):
        for klass, count in request.items():
            _add_into(result, {klass + DEVICES_PER_CLASS: count})
            if for_pod or not count:
                continue
            _add_into(result, {IMPLICIT_EXTENDED_PER_CLASS + klass: count})
            extended = ctx.extended_resources.get(klass)
            if extended:
                _add_into(result, {"requests." + extended: count})
    return result


def classic_claim_usage(claim: Obj) -> Usage:
    """resource.k8s.io/v1alpha2 ResourceClaim (1.28): one claim, also of its ResourceClass."""
    klass = str((claim.get("spec") or {}).get("resourceClassName") or "")
    return {
        "count/resourceclaims.resource.k8s.io": Fraction(1),
        "resourceclaims": Fraction(1),
        klass + CLAIMS_PER_RESOURCE_CLASS: Fraction(1),
    }
