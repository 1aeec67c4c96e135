"""Pod create and update rules (core ValidatePodCreate / ValidatePodUpdate, 1.28).

`spec.resourceClaims` follows validatePodResourceClaims (pkg/apis/core/validation) of the
Kubernetes version served: the entry's `source` (1.28) or the fields on the entry itself (since
1.31, the 1.36 mode), as the served `Schemas` (passed in) have them (`api/schema/podclaims.py`);
the spec is
immutable after create except container images, activeDeadlineSeconds, added tolerations and removed
scheduling gates.
"""

from __future__ import annotations

from typing import Any

from draplane.api import names
from draplane.api.errors import FieldError, duplicate, forbidden, invalid, not_supported, required
from draplane.api.meta import Obj
from draplane.api.schema import Schemas
from draplane.api.schema.pod import POD_RESOURCE_CLAIM
from draplane.api.validation import nodeaffinity
from draplane.api.validation.containers import (
    validate_containers,
    validate_ephemeral_containers,
    validate_resources,
)
from draplane.api.validation.objectmeta import (
    add_invalid,
    as_dict,
    as_list,
    as_str,
    prune,
    semantic_equal,
    shown,
    validate_labels,
    validate_object_meta,
    validate_object_meta_update,
)

_RESTART_POLICIES = ["Always", "OnFailure", "Never"]
_DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
_MAX_INT32 = 2**31 - 1
UPDATABLE_POD_SPEC_FIELDS = (
    "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
    "`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
)


def validate_pod_create(obj: Obj, schemas: Schemas) -> list[FieldError]:
    errs = validate_pod(obj, schemas)
    spec = obj.get("spec")
    if isinstance(spec, dict) and spec.get("ephemeralContainers"):
        # Added later through the pods/ephemeralcontainers subresource only.
        errs.append(forbidden("spec.ephemeralContainers", "cannot be set on create"))
    if isinstance(spec, dict) and spec.get("nodeName") and spec.get("schedulingGates"):
        errs.append(
            forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared")
        )
    return errs


def validate_pod(obj: Obj, schemas: Schemas) -> list[FieldError]:
    """Rules shared by create and update."""
    md = obj["metadata"]
    errs = validate_object_meta(md, namespaced=True, name_fn=names.name_is_dns_subdomain)
    errs.extend(validate_pod_spec(as_dict(obj.get("spec"), "spec", errs), schemas))
    return errs


def pod_claim_names(spec: Obj) -> set[str]:
    claims = spec.get("resourceClaims")
    if not isinstance(claims, list):
        return set()
    return {c["name"] for c in claims if isinstance(c, dict) and isinstance(c.get("name"), str)}


def validate_pod_spec(spec: Obj, schemas: Schemas) -> list[FieldError]:
    """The spec's rules; `spec.resourceClaims` as the served PodResourceClaim (`schemas`)."""
    errs: list[FieldError] = []
    if "resourceClaims" in spec:
        claims = spec["resourceClaims"]
        errs.extend(_pod_resource_claims(claims, "spec.resourceClaims", schemas))
    claim_names = pod_claim_names(spec)
    seen: set[str] = set()
    errs.extend(
        validate_containers(
            spec.get("containers"),
            path="spec.containers",
            claim_names=claim_names,
            seen=seen,
            require=True,
        )
    )
    if "initContainers" in spec:
        errs.extend(
            validate_containers(
                spec["initContainers"],
                path="spec.initContainers",
                claim_names=claim_names,
                seen=seen,
                require=False,
            )
        )
    if "ephemeralContainers" in spec:
        errs.extend(
            validate_ephemeral_containers(
                spec["ephemeralContainers"],
                path="spec.ephemeralContainers",
                claim_names=claim_names,
                seen=seen,
                targets=_container_names(spec),
            )
        )
    if "resources" in spec:  # pod-level resources (PodLevelResources): no claims
        resources = as_dict(spec["resources"], "spec.resources", errs)
        if resources.get("claims"):
            errs.append(forbidden("spec.resources.claims", "claims cannot be set for Resources"))
        pod_level = {k: v for k, v in resources.items() if k != "claims"}
        errs.extend(validate_resources(pod_level, path="spec.resources", claim_names=set()))
    errs.extend(_enum("spec.restartPolicy", spec.get("restartPolicy"), _RESTART_POLICIES))
    errs.extend(_enum("spec.dnsPolicy", spec.get("dnsPolicy"), _DNS_POLICIES))
    if "nodeSelector" in spec:
        errs.extend(validate_labels(spec["nodeSelector"], "spec.nodeSelector"))
    if spec.get("affinity") is not None:
        errs.extend(nodeaffinity.validate_node_affinity(spec["affinity"], "spec.affinity"))
    errs.extend(_optional_names(spec))
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and (not _is_int(deadline) or not 1 <= deadline <= _MAX_INT32):
        errs.append(
            invalid(
                "spec.activeDeadlineSeconds",
                deadline,
                f"must be between 1 and {_MAX_INT32}, inclusive",
            )
        )
    if spec.get("tolerations"):
        errs.extend(nodeaffinity.validate_tolerations(spec["tolerations"], "spec.tolerations"))
    if "schedulingGates" in spec:
        errs.extend(_scheduling_gates(spec["schedulingGates"], "spec.schedulingGates"))
    return errs


def _container_names(spec: Obj) -> set[str]:
    found: set[str] = set()
    for key in ("containers", "initContainers"):
        containers = spec.get(key)
        for c in containers if isinstance(containers, list) else []:
            if isinstance(c, dict) and isinstance(c.get("name"), str):
                found.add(c["name"])
    return found


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _enum(path: str, value: Any, allowed: list[str]) -> list[FieldError]:
    if not value:
        return [required(path)]
    if value not in allowed:
        return [not_supported(path, value, allowed)]
    return []


def _optional_names(spec: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    checks = (
        ("serviceAccountName", names.is_dns1123_subdomain),
        ("nodeName", names.is_dns1123_subdomain),
        ("hostname", names.is_dns1123_label),
        ("subdomain", names.is_dns1123_label),
        ("priorityClassName", names.is_dns1123_subdomain),
    )
    for key, fn in checks:
        value = spec.get(key)
        if value:
            add_invalid(errs, f"spec.{key}", value, fn(value))
    return errs


def claims_have_source(schemas: Schemas) -> bool:
    """The served PodResourceClaim has `source` (1.28); core/v1 since 1.31 has not."""
    return "source" in schemas.get(POD_RESOURCE_CLAIM).by_name


def _pod_resource_claims(claims: Any, path: str, schemas: Schemas) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    with_source = claims_have_source(schemas)
    for i, claim in enumerate(as_list(claims, path, errs)):
        p = f"{path}[{i}]"
        claim = as_dict(claim, p, errs)
        name = as_str(claim.get("name"), f"{p}.name", errs)
        if not name:
            errs.append(required(f"{p}.name"))
        elif name in seen:
            errs.append(duplicate(f"{p}.name", name))
        else:
            add_invalid(errs, f"{p}.name", name, names.is_dns1123_label(name))
            seen.add(name)
        if with_source:
            errs.extend(_claim_source(claim.get("source"), f"{p}.source"))
        else:
            errs.extend(_claim_fields(claim, p))
    return errs


def _claim_fields(claim: Obj, path: str) -> list[FieldError]:
    """The claim or template a PodResourceClaim names directly (validatePodResourceClaim since
    1.31): exactly one, each a DNS subdomain."""
    errs: list[FieldError] = []
    fields = []
    for key in ("resourceClaimName", "resourceClaimTemplateName"):
        value = claim.get(key)
        if value is not None:
            fields.append(key)
            add_invalid(errs, f"{path}.{key}", value, names.is_dns1123_subdomain(value))
    if len(fields) > 1:
        errs.append(
            invalid(
                path,
                ", ".join(fields),
                "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be "
                "specified",
            )
        )
    elif not fields:
        errs.append(
            required(path, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`")
        )
    return errs


def _claim_source(source: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    source = as_dict(source, path, errs)
    claim_name = source.get("resourceClaimName")
    template_name = source.get("resourceClaimTemplateName")
    if claim_name is not None and template_name is not None:
        errs.append(
            invalid(
                path,
                shown(prune(source)),
                "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be "
                "specified",
            )
        )
    if claim_name is None and template_name is None:
        errs.append(
            invalid(
                path,
                shown(prune(source)),
                "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
            )
        )
    for key, value in (
        ("resourceClaimName", claim_name),
        ("resourceClaimTemplateName", template_name),
    ):
        if value is not None:
            add_invalid(errs, f"{path}.{key}", value, names.is_dns1123_subdomain(value))
    return errs


def _scheduling_gates(gates: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, gate in enumerate(as_list(gates, path, errs)):
        p = f"{path}[{i}]"
        name = as_dict(gate, p, errs).get("name")
        add_invalid(errs, p, name, names.is_qualified_name(name))
        if isinstance(name, str):
            if name in seen:
                errs.append(duplicate(p, name))
            seen.add(name)
    return errs


def validate_pod_update(obj: Obj, old: Obj, schemas: Schemas) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(validate_pod(obj, schemas))
    spec = obj.get("spec")
    old_spec = old.get("spec") or {}
    if not isinstance(spec, dict) or semantic_equal(spec, old_spec):
        return errs
    for key in ("containers", "initContainers"):
        found, stop = _container_updates(spec.get(key), old_spec.get(key), f"spec.{key}")
        errs.extend(found)
        if stop:
            return errs
    errs.extend(_deadline_update(spec.get("activeDeadlineSeconds"), old_spec))
    errs.extend(_toleration_update(spec.get("tolerations"), old_spec.get("tolerations")))
    errs.extend(_gates_update(spec.get("schedulingGates"), old_spec.get("schedulingGates")))
    munged = _munge(spec, old_spec)
    if not semantic_equal(munged, old_spec):
        errs.append(
            forbidden(
                "spec",
                f"pod updates may not change fields other than {UPDATABLE_POD_SPEC_FIELDS}\n"
                + _diff(old_spec, munged),
            )
        )
    return errs


def _container_updates(new: Any, old: Any, path: str) -> tuple[list[FieldError], bool]:
    new_list = new if isinstance(new, list) else []
    old_list = old if isinstance(old, list) else []
    if len(new_list) != len(old_list):
        return [forbidden(path, "pod updates may not add or remove containers")], True
    return [], False


def _deadline_update(new: Any, old_spec: Obj) -> list[FieldError]:
    old = old_spec.get("activeDeadlineSeconds")
    path = "spec.activeDeadlineSeconds"
    if new is None:
        if old is not None:
            return [invalid(path, None, "must not update from a positive integer to nil value")]
        return []
    if _is_int(old) and _is_int(new) and old < new:
        return [invalid(path, new, "must be less than or equal to previous value")]
    return []


def _toleration_update(new: Any, old: Any) -> list[FieldError]:
    new_list = [t for t in (new or []) if isinstance(t, dict)] if isinstance(new, list) else []
    for old_tol in old or []:
        if not isinstance(old_tol, dict):
            continue
        base = {k: v for k, v in old_tol.items() if k != "tolerationSeconds"}
        if not any(
            semantic_equal(base, {k: v for k, v in t.items() if k != "tolerationSeconds"})
            for t in new_list
        ):
            return [
                forbidden(
                    "spec.tolerations",
                    "existing toleration can not be modified except its tolerationSeconds",
                )
            ]
    return []


def _gates_update(new: Any, old: Any) -> list[FieldError]:
    if not isinstance(new, list) or not new:
        return []
    old_names = {g.get("name") for g in (old or []) if isinstance(g, dict)}
    return [
        forbidden(
            f"spec.schedulingGates[{i}].name",
            f"only deletion is allowed, but found new scheduling gate '{g.get('name')}'",
        )
        for i, g in enumerate(new)
        if isinstance(g, dict) and g.get("name") not in old_names
    ]


def _munge(spec: Obj, old_spec: Obj) -> Obj:
    """The new spec with every field a pod update may change reset to its old value."""
    munged = dict(spec)
    for key in ("containers", "initContainers"):
        new_list, old_list = spec.get(key), old_spec.get(key)
        if isinstance(new_list, list) and isinstance(old_list, list):
            munged[key] = [
                {**c, "image": o.get("image")} if isinstance(c, dict) and isinstance(o, dict) else c
                for c, o in zip(new_list, old_list, strict=False)
            ]
    for key in ("activeDeadlineSeconds", "schedulingGates", "tolerations"):
        munged[key] = old_spec.get(key)
    old_grace = old_spec.get("terminationGracePeriodSeconds")
    if (
        isinstance(old_grace, int)
        and old_grace < 0
        and munged.get("terminationGracePeriodSeconds") == 1
    ):
        munged["terminationGracePeriodSeconds"] = old_grace
    return munged


def _diff(old: Obj, new: Obj) -> str:
    changed = sorted(k for k in set(old) | set(new) if not semantic_equal(old.get(k), new.get(k)))
    return "changed fields: " + ", ".join(f"spec.{k}" for k in changed)
