"""The JSON type of every field draplane reads, per kind, checked before any other rule.

kube-apiserver decodes a body into Go structs first, so a string where a list belongs never
reaches validation, storage or a reader. draplane keeps objects as dicts; `type_errors` is that
decoding step: one walk over the object against the tables below, reporting each mismatch as
`<path>: Invalid value: <value>: must be a string` (FieldValueTypeInvalid). Null is accepted
anywhere (Go leaves the zero value); fields not listed are kept unchecked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from draplane.api import kinds
from draplane.api.errors import FieldError
from draplane.api.kinds import ResourceType
from draplane.api.validation.objectmeta import type_invalid

STRING, INTEGER, BOOLEAN, QUANTITY, OBJECT = "string", "integer", "boolean", "quantity", "object"
TIME = "time"
"""metav1.Time and MicroTime: an RFC 3339 string ("" counts as unset)."""
_RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", re.ASCII
)


@dataclass(frozen=True)
class MapOf:
    """A JSON object with arbitrary keys whose values all have type `value`; errors name the
    key (`data[k]`) unless `keyed` is false (labels and annotations report at the map)."""

    value: Any
    keyed: bool = True


Spec = Any
"""A type name above, a dict (object with these fields), a one-item list (array of that type)
or a `MapOf`."""

_DETAIL = {
    STRING: "must be a string",
    INTEGER: "must be an integer",
    BOOLEAN: "must be a boolean",
    QUANTITY: "must be a quantity (a string or a number)",
    OBJECT: "must be an object",
    TIME: "must be an RFC 3339 timestamp",
}


def _is(kind: str, value: Any) -> bool:
    if kind == STRING:
        return isinstance(value, str)
    if kind == INTEGER:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == BOOLEAN:
        return isinstance(value, bool)
    if kind == QUANTITY:
        return isinstance(value, str | int | float) and not isinstance(value, bool)
    if kind == TIME:
        return isinstance(value, str) and (not value or _RFC3339.fullmatch(value) is not None)
    return isinstance(value, dict)


def check(spec: Spec, value: Any, path: str, errs: list[FieldError]) -> None:
    """Append a FieldValueTypeInvalid for every place `value` does not have the type `spec`."""
    if value is None:
        return
    if spec.__class__ is str:
        if not _is(spec, value):
            errs.append(type_invalid(path, value, _DETAIL[spec]))
    elif isinstance(spec, dict):
        if not isinstance(value, dict):
            errs.append(type_invalid(path, value, "must be an object"))
            return
        prefix = f"{path}." if path else ""
        for key, item in value.items():
            sub = spec.get(key)
            if sub is not None and item is not None:
                check(sub, item, prefix + key, errs)
    elif isinstance(spec, list):
        if not isinstance(value, list):
            errs.append(type_invalid(path, value, "must be a list"))
            return
        for i, item in enumerate(value):
            check(spec[0], item, f"{path}[{i}]", errs)
    else:
        if not isinstance(value, dict):
            errs.append(type_invalid(path, value, "must be an object"))
            return
        for key, item in value.items():
            check(spec.value, item, f"{path}[{key}]" if spec.keyed else path, errs)


def type_errors(rt: ResourceType, obj: Any) -> list[FieldError]:
    """Every field of `obj` whose JSON type is not the one kind `rt` gives it."""
    errs: list[FieldError] = []
    check(KIND_FIELDS.get(rt, _OBJECT_FIELDS), obj, "", errs)
    return errs


_STRINGS = [STRING]
_STRING_MAP = MapOf(STRING)
_LABELS = MapOf(STRING, keyed=False)
_QUANTITIES = MapOf(QUANTITY)

OBJECT_META: Spec = {
    **dict.fromkeys(
        (
            "name",
            "generateName",
            "namespace",
            "uid",
            "resourceVersion",
            "selfLink",
        ),
        STRING,
    ),
    "creationTimestamp": TIME,
    "deletionTimestamp": TIME,
    "generation": INTEGER,
    "deletionGracePeriodSeconds": INTEGER,
    "labels": _LABELS,
    "annotations": _LABELS,
    "finalizers": _STRINGS,
    "ownerReferences": [
        {
            **dict.fromkeys(("apiVersion", "kind", "name", "uid"), STRING),
            "controller": BOOLEAN,
            "blockOwnerDeletion": BOOLEAN,
        }
    ],
    "managedFields": [
        {
            **dict.fromkeys(
                ("manager", "operation", "apiVersion", "fieldsType", "subresource"), STRING
            ),
            "time": TIME,
            "fieldsV1": OBJECT,
        }
    ],
}
_TOP = {"apiVersion": STRING, "kind": STRING, "metadata": OBJECT_META}
_OBJECT_FIELDS: Spec = _TOP

_CONDITION: Spec = {
    **dict.fromkeys(("type", "status", "reason", "message"), STRING),
    **dict.fromkeys(("lastTransitionTime", "lastProbeTime", "lastHeartbeatTime"), TIME),
}
_REQUIREMENT: Spec = {"key": STRING, "operator": STRING, "values": _STRINGS}
_SELECTOR_TERM: Spec = {"matchExpressions": [_REQUIREMENT], "matchFields": [_REQUIREMENT]}
NODE_SELECTOR: Spec = {"nodeSelectorTerms": [_SELECTOR_TERM]}
_LABEL_SELECTOR: Spec = {"matchLabels": _STRING_MAP, "matchExpressions": [_REQUIREMENT]}
_POD_AFFINITY_TERM: Spec = {
    "labelSelector": _LABEL_SELECTOR,
    "namespaceSelector": _LABEL_SELECTOR,
    "namespaces": _STRINGS,
    "topologyKey": STRING,
}
_POD_AFFINITY: Spec = {
    "requiredDuringSchedulingIgnoredDuringExecution": [_POD_AFFINITY_TERM],
    "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": INTEGER, "podAffinityTerm": _POD_AFFINITY_TERM}
    ],
}
_AFFINITY: Spec = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": NODE_SELECTOR,
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": INTEGER, "preference": _SELECTOR_TERM}
        ],
    },
    "podAffinity": _POD_AFFINITY,
    "podAntiAffinity": _POD_AFFINITY,
}
_CONTAINER: Spec = {
    **dict.fromkeys(
        (
            "name",
            "image",
            "imagePullPolicy",
            "terminationMessagePath",
            "terminationMessagePolicy",
            "workingDir",
        ),
        STRING,
    ),
    "command": _STRINGS,
    "args": _STRINGS,
    "ports": [
        {
            "name": STRING,
            "containerPort": INTEGER,
            "hostPort": INTEGER,
            "protocol": STRING,
            "hostIP": STRING,
        }
    ],
    "env": [{"name": STRING, "value": STRING, "valueFrom": OBJECT}],
    "resources": {
        "limits": _QUANTITIES,
        "requests": _QUANTITIES,
        "claims": [{"name": STRING}],
    },
    "stdin": BOOLEAN,
    "tty": BOOLEAN,
}
_POD_SPEC: Spec = {
    **dict.fromkeys(
        (
            "restartPolicy",
            "dnsPolicy",
            "schedulerName",
            "serviceAccountName",
            "serviceAccount",
            "nodeName",
            "hostname",
            "subdomain",
            "priorityClassName",
            "preemptionPolicy",
            "runtimeClassName",
        ),
        STRING,
    ),
    **dict.fromkeys(
        ("priority", "terminationGracePeriodSeconds", "activeDeadlineSeconds"), INTEGER
    ),
    **dict.fromkeys(
        ("enableServiceLinks", "hostNetwork", "hostPID", "hostIPC", "automountServiceAccountToken"),
        BOOLEAN,
    ),
    "containers": [_CONTAINER],
    "initContainers": [_CONTAINER],
    "nodeSelector": _LABELS,
    "tolerations": [
        {
            **dict.fromkeys(("key", "operator", "value", "effect"), STRING),
            "tolerationSeconds": INTEGER,
        }
    ],
    "affinity": _AFFINITY,
    "schedulingGates": [{"name": STRING}],
    "readinessGates": [{"conditionType": STRING}],
    "resourceClaims": [
        {
            "name": STRING,
            "source": {"resourceClaimName": STRING, "resourceClaimTemplateName": STRING},
        }
    ],
    "volumes": [{"name": STRING}],
}
_CONTAINER_STATE: Spec = {
    "waiting": {"reason": STRING, "message": STRING},
    "running": {"startedAt": STRING},
    "terminated": {
        **dict.fromkeys(("reason", "message", "startedAt", "finishedAt", "containerID"), STRING),
        "exitCode": INTEGER,
        "signal": INTEGER,
    },
}
_CONTAINER_STATUS: Spec = {
    **dict.fromkeys(("name", "image", "imageID", "containerID"), STRING),
    "ready": BOOLEAN,
    "started": BOOLEAN,
    "restartCount": INTEGER,
    "state": _CONTAINER_STATE,
    "lastState": _CONTAINER_STATE,
}
_POD_STATUS: Spec = {
    **dict.fromkeys(
        (
            "phase",
            "reason",
            "message",
            "podIP",
            "hostIP",
            "nominatedNodeName",
            "qosClass",
        ),
        STRING,
    ),
    "startTime": TIME,
    "conditions": [_CONDITION],
    "podIPs": [{"ip": STRING}],
    "hostIPs": [{"ip": STRING}],
    "containerStatuses": [_CONTAINER_STATUS],
    "initContainerStatuses": [_CONTAINER_STATUS],
    "resourceClaimStatuses": [{"name": STRING, "resourceClaimName": STRING}],
}
_NODE_SPEC: Spec = {
    "podCIDR": STRING,
    "podCIDRs": _STRINGS,
    "providerID": STRING,
    "unschedulable": BOOLEAN,
    "taints": [{**dict.fromkeys(("key", "value", "effect"), STRING), "timeAdded": TIME}],
}
_NODE_STATUS: Spec = {
    "capacity": _QUANTITIES,
    "allocatable": _QUANTITIES,
    "phase": STRING,
    "conditions": [_CONDITION],
    "addresses": [{"type": STRING, "address": STRING}],
    "nodeInfo": _STRING_MAP,
    "daemonEndpoints": {"kubeletEndpoint": {"Port": INTEGER}},
}
_CLAIM_SPEC: Spec = {
    "resourceClassName": STRING,
    "allocationMode": STRING,
    "parametersRef": dict.fromkeys(("apiGroup", "kind", "name"), STRING),
}
_CLAIM_STATUS: Spec = {
    "driverName": STRING,
    "allocation": {
        "resourceHandles": [{"driverName": STRING, "data": STRING}],
        "shareable": BOOLEAN,
        "availableOnNodes": NODE_SELECTOR,
    },
    "reservedFor": [dict.fromkeys(("apiGroup", "resource", "name", "uid"), STRING)],
    "deallocationRequested": BOOLEAN,
}
_OBJECT_REFERENCE: Spec = dict.fromkeys(
    ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"), STRING
)

_CRD_NAMES: Spec = {
    **dict.fromkeys(("plural", "singular", "kind", "listKind"), STRING),
    "shortNames": _STRINGS,
    "categories": _STRINGS,
}

KIND_FIELDS: dict[ResourceType, Spec] = {
    kinds.PODS: {**_TOP, "spec": _POD_SPEC, "status": _POD_STATUS},
    kinds.NODES: {**_TOP, "spec": _NODE_SPEC, "status": _NODE_STATUS},
    kinds.NAMESPACES: {
        **_TOP,
        "spec": {"finalizers": _STRINGS},
        "status": {"phase": STRING, "conditions": [_CONDITION]},
    },
    kinds.EVENTS: {
        **_TOP,
        **dict.fromkeys(
            (
                "reason",
                "message",
                "type",
                "action",
                "reportingComponent",
                "reportingInstance",
            ),
            STRING,
        ),
        **dict.fromkeys(("firstTimestamp", "lastTimestamp", "eventTime"), TIME),
        "count": INTEGER,
        "involvedObject": _OBJECT_REFERENCE,
        "related": _OBJECT_REFERENCE,
        "source": {"component": STRING, "host": STRING},
        "series": {"count": INTEGER, "lastObservedTime": TIME},
    },
    kinds.CONFIGMAPS: {
        **_TOP,
        "data": _STRING_MAP,
        "binaryData": _STRING_MAP,
        "immutable": BOOLEAN,
    },
    kinds.LEASES: {
        **_TOP,
        "spec": {
            "holderIdentity": STRING,
            **dict.fromkeys(("acquireTime", "renewTime"), TIME),
            "leaseDurationSeconds": INTEGER,
            "leaseTransitions": INTEGER,
        },
    },
    kinds.RESOURCE_CLASSES: {
        **_TOP,
        "driverName": STRING,
        "parametersRef": dict.fromkeys(("apiGroup", "kind", "name", "namespace"), STRING),
        "suitableNodes": NODE_SELECTOR,
    },
    kinds.RESOURCE_CLAIMS: {**_TOP, "spec": _CLAIM_SPEC, "status": _CLAIM_STATUS},
    kinds.RESOURCE_CLAIM_TEMPLATES: {
        **_TOP,
        "spec": {"metadata": OBJECT_META, "spec": _CLAIM_SPEC},
    },
    kinds.POD_SCHEDULING_CONTEXTS: {
        **_TOP,
        "spec": {"selectedNode": STRING, "potentialNodes": _STRINGS},
        "status": {"resourceClaims": [{"name": STRING, "unsuitableNodes": _STRINGS}]},
    },
    kinds.CUSTOM_RESOURCE_DEFINITIONS: {
        **_TOP,
        "spec": {
            "group": STRING,
            "scope": STRING,
            "preserveUnknownFields": BOOLEAN,
            "names": _CRD_NAMES,
            "conversion": {"strategy": STRING, "webhook": OBJECT},
            "versions": [
                {
                    "name": STRING,
                    **dict.fromkeys(("served", "storage", "deprecated"), BOOLEAN),
                    "deprecationWarning": STRING,
                    "schema": {"openAPIV3Schema": OBJECT},
                    "subresources": {
                        "status": OBJECT,
                        "scale": dict.fromkeys(
                            ("specReplicasPath", "statusReplicasPath", "labelSelectorPath"),
                            STRING,
                        ),
                    },
                    "additionalPrinterColumns": [
                        {
                            **dict.fromkeys(
                                ("name", "type", "format", "description", "jsonPath"), STRING
                            ),
                            "priority": INTEGER,
                        }
                    ],
                    "selectableFields": [{"jsonPath": STRING}],
                }
            ],
        },
        "status": {
            "conditions": [_CONDITION],
            "acceptedNames": _CRD_NAMES,
            "storedVersions": _STRINGS,
        },
    },
}
