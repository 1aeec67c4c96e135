"""Declarations of the policy/v1 kinds: PodDisruptionBudget (pkg/registry/policy/
poddisruptionbudget) and its Table (MIN AVAILABLE, MAX UNAVAILABLE, ALLOWED DISRUPTIONS).

Create resets the status (its counters are always encoded, as 0); the `status` subresource
writes only the status. Nothing evicts pods or computes disruptions (docs/fidelity.md): the
status is whatever a client writes.
"""

from __future__ import annotations

from typing import Any

from draplane.api import kinds
from draplane.api.meta import Obj
from draplane.api.validation import policy
from draplane.apiserver.printing import AGE, NAME, AgeFn, Column, Printer, aged
from draplane.apiserver.strategies import ResourceStrategy
from draplane.apiserver.workloadprinters import _at, _int, _name, _obj

COLUMNS: list[Column] = [
    NAME,
    ("Min Available", "string", 0, "The minimum number of pods that must be available."),
    ("Max Unavailable", "string", 0, "The maximum number of pods that may be unavailable."),
    ("Allowed Disruptions", "integer", 0, "Calculated number of pods that may be disrupted."),
    AGE,
]


def _int_or_string(value: Any) -> str:
    return "N/A" if value is None else str(value)


def cells(obj: Obj, age: AgeFn) -> list[Any]:
    spec = _obj(obj.get("spec"))
    return [
        _name(obj),
        _int_or_string(spec.get("minAvailable")),
        _int_or_string(spec.get("maxUnavailable")),
        _int(_at(obj, "status", "disruptionsAllowed")),
        age(_at(obj, "metadata", "creationTimestamp")),
    ]


PRINTER = Printer(COLUMNS, aged(cells))


def _reset_status(obj: Obj) -> None:
    obj["status"] = {}


STRATEGIES = (
    ResourceStrategy(
        kinds.POD_DISRUPTION_BUDGETS,
        validate=policy.validate_pod_disruption_budget,
        validate_update=policy.validate_pod_disruption_budget_update,
        validate_status=policy.validate_pod_disruption_budget_status_update,
        printer=PRINTER,
        prepare_for_create=_reset_status,
        status_zeros=policy.STATUS_COUNTERS,
    ),
)
