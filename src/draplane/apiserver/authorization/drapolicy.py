"""The bootstrap rules that differ between the modes (DynamicResourceAllocation), by
`versions.Dra`: the scheduler's DRA rules (1.28's classic DRA, or 1.34's structured parameters
with 1.36's additions) and what the resource claim controller may write beyond 1.28's rules."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from draplane.api import versions
from draplane.api.meta import Obj
from draplane.apiserver.authorization.rulebuilders import RESOURCE, RU, RW, R, rule


@dataclass(frozen=True)
class DraRules:
    scheduler: list[Obj]
    """system:kube-scheduler's DynamicResourceAllocation rules."""
    claim_controller: list[Obj]
    """system:controller:resource-claim-controller's rules beyond 1.28's."""


def dra_rules(mode: versions.Mode) -> DraRules:
    """Fresh rules of `mode`."""
    return _BY_DRA[mode.dra]()


def _classic() -> DraRules:
    return DraRules(
        scheduler=[
            rule(R, (RESOURCE,), "resourceclaims", "resourceclasses"),
            rule(RU, (RESOURCE,), "resourceclaims/status"),
            rule(RW, (RESOURCE,), "podschedulingcontexts"),
            rule(R, (RESOURCE,), "podschedulingcontexts/status"),
        ],
        claim_controller=[],
    )


def _structured() -> DraRules:
    return DraRules(
        scheduler=[
            rule(R, (RESOURCE,), "resourceclaims", "deviceclasses"),
            rule(RU, (RESOURCE,), "resourceclaims/status"),
            rule(R, (RESOURCE,), "resourceslices"),
            # DRAResourceClaimGranularStatusAuthorization (1.36): allocation and reservedFor.
            rule(("update", "patch"), (RESOURCE,), "resourceclaims/binding"),
            # PreBind adds the delete-protection finalizer before it writes an allocation.
            rule(("update", "patch"), (RESOURCE,), "resourceclaims"),
            # DRAExtendedResource (beta, on in 1.36): the claims of DRA-backed extended resources.
            rule(("create", "delete"), (RESOURCE,), "resourceclaims"),
        ],
        claim_controller=[
            rule(("update", "patch"), (RESOURCE,), "resourceclaims/binding"),
            # Removing the delete-protection finalizer of a deallocated claim.
            rule(("update", "patch"), (RESOURCE,), "resourceclaims"),
        ],
    )


_BY_DRA: dict[versions.Dra, Callable[[], DraRules]] = {
    versions.Dra.CLASSIC: _classic,
    versions.Dra.STRUCTURED: _structured,
}
