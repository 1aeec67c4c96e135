"""resource.k8s.io/v1alpha2 validation: ResourceClaim (incl. status rules 1-8),
ResourceClaimTemplate, ResourceClass and PodSchedulingContext.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from draplane.api import kinds
from draplane.api.errors import FieldError
from draplane.api.meta import Obj
from draplane.testing import kindrules as validation
from draplane.testing.builders import (
    from_claim,
    from_scheduling_context,
    make_claim,
    make_class,
    make_pod,
    make_scheduling_context,
    make_template,
)

REQ, INV, DUP, FORB = (
    "FieldValueRequired",
    "FieldValueInvalid",
    "FieldValueDuplicate",
    "FieldValueForbidden",
)
NOT_SUP, TOO_MANY, TOO_LONG = "FieldValueNotSupported", "FieldValueTooMany", "FieldValueTooLong"


def _causes(errs: list[FieldError]) -> list[tuple[str, str]]:
    return [(e.type, e.field) for e in errs]


@pytest.mark.parametrize(
    ("claim", "causes"),
    [
        pytest.param(make_claim().obj(), [], id="valid"),
        pytest.param(make_claim().allocation_mode("Immediate").obj(), [], id="immediate"),
        pytest.param(make_claim().parameters("p").obj(), [], id="parameters"),
        pytest.param(
            make_claim().allocation_mode("Later").obj(),
            [(NOT_SUP, "spec.allocationMode")],
            id="allocation-mode",
        ),
        pytest.param(
            make_claim().resource_class("Bad_Class").obj(),
            [(INV, "spec.resourceClassName")],
            id="class-name",
        ),
        pytest.param(
            make_claim().resource_class("").obj(),
            [(INV, "spec.resourceClassName")],
            id="class-name-empty",
        ),
        pytest.param(
            make_claim().set("spec.parametersRef", {"apiGroup": "x"}).obj(),
            [(REQ, "spec.parametersRef.kind"), (REQ, "spec.parametersRef.name")],
            id="parameters-incomplete",
        ),
        pytest.param(
            make_claim("Bad_Name").obj(), [(INV, "metadata.name")], id="name-not-subdomain"
        ),
        pytest.param(
            make_claim().generate_name("pod-gpu-").obj(),
            [(REQ, "metadata.name")],
            id="generate-name-without-name",
        ),
        pytest.param(
            make_claim().set("metadata.namespace", "").obj(),
            [(REQ, "metadata.namespace")],
            id="namespace-required",
        ),
        pytest.param(
            make_claim().set("spec", "x").obj(),
            [("FieldValueTypeInvalid", "spec")],
            id="spec-wrong-type",
        ),
    ],
)
def test_validate_claim_create(claim: Obj, causes: list[tuple[str, str]]) -> None:
    validation.default(kinds.RESOURCE_CLAIMS, claim)
    assert _causes(validation.validate_create(kinds.RESOURCE_CLAIMS, claim)) == causes


def test_claim_spec_is_immutable() -> None:
    old = make_claim().resource_version("3").obj()
    new = from_claim(old).resource_class("other").obj()
    errs = validation.validate_update(kinds.RESOURCE_CLAIMS, new, old)
    assert _causes(errs) == [(INV, "spec")]
    assert errs[0].message().endswith("field is immutable")
    relabelled = from_claim(old).label("a", "b").obj()
    assert validation.validate_update(kinds.RESOURCE_CLAIMS, relabelled, old) == []


def test_claim_spec_defaulted_on_update_is_unchanged() -> None:
    old = make_claim().obj()
    new = from_claim(old).obj()
    del new["spec"]["allocationMode"]
    validation.default(kinds.RESOURCE_CLAIMS, new)
    assert validation.validate_update(kinds.RESOURCE_CLAIMS, new, old) == []


_POD = make_pod("p", "default").obj()
_OTHER = make_pod("q", "default").obj()
_ALLOCATED = make_claim().allocation(node="node-0").obj()
_RESERVED = from_claim(_ALLOCATED).reserved_for(_POD).obj()
_SHAREABLE = make_claim().allocation(shareable=True).obj()


def _status(claim: Obj, change: Callable[[Any], Any] | None = None) -> Obj:
    b = from_claim(claim)
    if change is not None:
        change(b)
    return b.obj()


STATUS_CASES = [
    pytest.param(make_claim().obj(), _ALLOCATED, [], id="allocate"),
    pytest.param(_ALLOCATED, _RESERVED, [], id="reserve"),
    pytest.param(_RESERVED, _ALLOCATED, [], id="unreserve"),
    pytest.param(_ALLOCATED, make_claim().obj(), [], id="deallocate"),
    pytest.param(
        make_claim().obj(),
        make_claim().reserved_for(_POD).obj(),
        [(FORB, "status.reservedFor")],
        id="rule1-reserved-needs-allocation",
    ),
    pytest.param(
        _ALLOCATED,
        from_claim(_ALLOCATED).reserved_for(_POD, _OTHER).obj(),
        [(FORB, "status.reservedFor")],
        id="rule2-not-shareable",
    ),
    pytest.param(
        _SHAREABLE,
        from_claim(_SHAREABLE).reserved_for(_POD, _OTHER).obj(),
        [],
        id="rule2-shareable",
    ),
    pytest.param(
        _SHAREABLE,
        from_claim(_SHAREABLE).reserved_for(_POD, _POD).obj(),
        [(DUP, "status.reservedFor[1].uid")],
        id="rule3-duplicate-uid",
    ),
    pytest.param(
        _SHAREABLE,
        from_claim(_SHAREABLE)
        .set("status.reservedFor", [{"resource": "", "name": "", "uid": ""}])
        .obj(),
        [
            (REQ, "status.reservedFor[0].resource"),
            (REQ, "status.reservedFor[0].name"),
            (REQ, "status.reservedFor[0].uid"),
        ],
        id="rule3-fields-required",
    ),
    pytest.param(
        _SHAREABLE,
        from_claim(_SHAREABLE)
        .set(
            "status.reservedFor",
            [{"resource": "pods", "name": f"p{i}", "uid": f"u{i}"} for i in range(33)],
        )
        .obj(),
        [(TOO_MANY, "status.reservedFor")],
        id="rule3-at-most-32",
    ),
    pytest.param(
        from_claim(_ALLOCATED).deallocation_requested().obj(),
        from_claim(_ALLOCATED).deallocation_requested().reserved_for(_POD).obj(),
        [(FORB, "status.reservedFor")],
        id="rule4-no-add-while-deallocating",
    ),
    pytest.param(
        from_claim(_ALLOCATED).deletion_timestamp().obj(),
        from_claim(_ALLOCATED).deletion_timestamp().reserved_for(_POD).obj(),
        [(FORB, "status.reservedFor")],
        id="rule4-no-add-while-deleting",
    ),
    pytest.param(
        from_claim(_SHAREABLE).deletion_timestamp().reserved_for(_POD, _OTHER).obj(),
        from_claim(_SHAREABLE).deletion_timestamp().reserved_for(_POD).obj(),
        [],
        id="rule4-remove-while-deleting",
    ),
    pytest.param(
        _ALLOCATED,
        make_claim().allocation(node="node-1").obj(),
        [(INV, "status.allocation")],
        id="rule5-allocation-immutable",
    ),
    pytest.param(
        _RESERVED,
        from_claim(_RESERVED).deallocation_requested().obj(),
        [(FORB, "status.deallocationRequested")],
        id="rule6-no-dealloc-while-reserved",
    ),
    pytest.param(
        _ALLOCATED,
        from_claim(_ALLOCATED).deallocation_requested().obj(),
        [],
        id="rule6-dealloc-unreserved",
    ),
    pytest.param(
        make_claim().obj(),
        make_claim().deallocation_requested().obj(),
        [(FORB, "status")],
        id="rule7-dealloc-needs-allocation",
    ),
    pytest.param(
        from_claim(_ALLOCATED).deallocation_requested().obj(),
        _ALLOCATED,
        [(FORB, "status.deallocationRequested")],
        id="rule8-no-clear-while-allocated",
    ),
    pytest.param(
        from_claim(_ALLOCATED).deallocation_requested().obj(),
        make_claim().obj(),
        [],
        id="rule8-clear-with-allocation",
    ),
    pytest.param(
        make_claim().obj(),
        make_claim().allocation(driver="Bad_Driver!").obj(),
        [
            (INV, "status.driverName"),
            (INV, "status.allocation.resourceHandles[0].driverName"),
        ],
        id="driver-name",
    ),
    pytest.param(
        make_claim().obj(),
        make_claim().allocation().set("status.driverName", "").obj(),
        [(REQ, "status.driverName")],
        id="driver-name-required-with-allocation",
    ),
    pytest.param(
        make_claim().obj(),
        make_claim().allocation(data="x" * 16385).obj(),
        [(TOO_LONG, "status.allocation.resourceHandles[0].data")],
        id="handle-data-too-long",
    ),
    pytest.param(
        make_claim().obj(),
        make_claim()
        .allocation()
        .set("status.allocation", {"resourceHandles": [{"driverName": "d.example.com"}] * 33})
        .obj(),
        [(TOO_MANY, "status.allocation.resourceHandles")],
        id="too-many-handles",
    ),
    pytest.param(
        make_claim().obj(),
        make_claim()
        .allocation()
        .set("status.allocation.availableOnNodes", {"nodeSelectorTerms": []})
        .obj(),
        [(REQ, "status.allocation.availableOnNodes.nodeSelectorTerms")],
        id="available-on-nodes-empty",
    ),
]


@pytest.mark.parametrize(("old", "new", "causes"), STATUS_CASES)
def test_validate_claim_status_update(old: Obj, new: Obj, causes: list[tuple[str, str]]) -> None:
    new["metadata"] = dict(old["metadata"])
    errs = validation.validate_status_update(kinds.RESOURCE_CLAIMS, new, old)
    assert _causes(errs) == causes


@pytest.mark.parametrize(
    ("template", "causes"),
    [
        pytest.param(make_template().obj(), [], id="valid"),
        pytest.param(
            make_template().claim_label("a", "b").claim_annotation("c", "d").obj(),
            [],
            id="labels-annotations",
        ),
        pytest.param(
            make_template().set("spec.metadata", {"name": "x", "finalizers": ["a/b"]}).obj(),
            [(FORB, "spec.metadata.finalizers"), (FORB, "spec.metadata.name")],
            id="other-meta-forbidden",
        ),
        pytest.param(
            make_template().claim_label("a", "-bad").obj(),
            [(INV, "spec.metadata.labels")],
            id="bad-label",
        ),
        pytest.param(
            make_template().allocation_mode("x").obj(),
            [(NOT_SUP, "spec.spec.allocationMode")],
            id="claim-spec-validated",
        ),
    ],
)
def test_validate_claim_template(template: Obj, causes: list[tuple[str, str]]) -> None:
    validation.default(kinds.RESOURCE_CLAIM_TEMPLATES, template)
    errs = validation.validate_create(kinds.RESOURCE_CLAIM_TEMPLATES, template)
    assert _causes(errs) == causes
    if causes and causes[0][0] == FORB:
        assert errs[0].detail == "cannot be set"


def test_claim_template_spec_is_immutable() -> None:
    old = make_template().obj()
    new = make_template().resource_class("other").obj()
    new["metadata"] = dict(old["metadata"])
    assert _causes(validation.validate_update(kinds.RESOURCE_CLAIM_TEMPLATES, new, old)) == [
        (INV, "spec")
    ]


@pytest.mark.parametrize(
    ("cls", "causes"),
    [
        pytest.param(make_class().obj(), [], id="valid"),
        pytest.param(make_class().suitable_nodes("n1").parameters("p").obj(), [], id="full"),
        pytest.param(
            make_class(driver="").obj(),
            [(REQ, "driverName"), (INV, "driverName")],
            id="driver-required",
        ),
        pytest.param(
            make_class(driver="a" * 64).obj(), [(TOO_LONG, "driverName")], id="driver-too-long"
        ),
        pytest.param(make_class(driver="Driver.Example.COM").obj(), [], id="driver-case-folded"),
        pytest.param(make_class(driver="driver_x").obj(), [(INV, "driverName")], id="driver-bad"),
        pytest.param(
            make_class().set("parametersRef", {"namespace": "Bad_Ns"}).obj(),
            [
                (REQ, "parametersRef.kind"),
                (REQ, "parametersRef.name"),
                (INV, "parametersRef.namespace"),
            ],
            id="parameters",
        ),
        pytest.param(
            make_class()
            .set(
                "suitableNodes",
                {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.uid", "operator": "In", "values": ["x"]}
                            ]
                        }
                    ]
                },
            )
            .obj(),
            [(INV, "suitableNodes.nodeSelectorTerms[0].matchFields[0].key")],
            id="suitable-nodes-field-key",
        ),
        pytest.param(
            make_class().namespace("default").obj(),
            [(FORB, "metadata.namespace")],
            id="cluster-scoped",
        ),
    ],
)
def test_validate_class(cls: Obj, causes: list[tuple[str, str]]) -> None:
    assert _causes(validation.validate_create(kinds.RESOURCE_CLASSES, cls)) == causes
    assert _causes(validation.validate_update(kinds.RESOURCE_CLASSES, cls, cls)) == causes


_PSC_POD = make_pod("p", "default").obj()


@pytest.mark.parametrize(
    ("psc", "causes"),
    [
        pytest.param(make_scheduling_context(_PSC_POD).obj(), [], id="valid"),
        pytest.param(
            make_scheduling_context(_PSC_POD).potential_nodes("a", "b").selected_node("a").obj(),
            [],
            id="nodes",
        ),
        pytest.param(
            make_scheduling_context(_PSC_POD).potential_nodes("a", "a").obj(),
            [(DUP, "spec.potentialNodes[1]")],
            id="duplicate-node",
        ),
        pytest.param(
            make_scheduling_context(_PSC_POD).potential_nodes("Bad_Node").obj(),
            [(INV, "spec.potentialNodes[0]")],
            id="bad-node",
        ),
        pytest.param(
            make_scheduling_context(_PSC_POD).potential_nodes(*[f"n{i}" for i in range(129)]).obj(),
            [(TOO_MANY, "spec.potentialNodes")],
            id="too-many-nodes",
        ),
        pytest.param(
            make_scheduling_context(_PSC_POD).selected_node("Bad_Node").obj(),
            [(INV, "spec.selectedNode")],
            id="bad-selected-node",
        ),
    ],
)
def test_validate_scheduling_context(psc: Obj, causes: list[tuple[str, str]]) -> None:
    assert _causes(validation.validate_create(kinds.POD_SCHEDULING_CONTEXTS, psc)) == causes
    assert _causes(validation.validate_update(kinds.POD_SCHEDULING_CONTEXTS, psc, psc)) == causes


@pytest.mark.parametrize(
    ("entries", "causes"),
    [
        pytest.param([("gpu", ["a", "b"])], [], id="valid"),
        pytest.param(
            [("gpu", ["a"]), ("gpu", ["b"])], [(DUP, "status.resourceClaims[1]")], id="duplicate"
        ),
        pytest.param(
            [("gpu", ["a", "a"])],
            [(DUP, "status.resourceClaims[0].unsuitableNodes[1]")],
            id="duplicate-node",
        ),
        pytest.param(
            [("gpu", [f"n{i}" for i in range(129)])],
            [(TOO_MANY, "status.resourceClaims[0].unsuitableNodes")],
            id="too-many",
        ),
    ],
)
def test_validate_scheduling_context_status(
    entries: list[tuple[str, list[str]]], causes: list[tuple[str, str]]
) -> None:
    old = make_scheduling_context(_PSC_POD).obj()
    b = from_scheduling_context(old)
    for name, nodes in entries:
        b.unsuitable_nodes(name, *nodes)
    errs = validation.validate_status_update(kinds.POD_SCHEDULING_CONTEXTS, b.obj(), old)
    assert _causes(errs) == causes
