"""Every served kind has one declaration, and PriorityClass's rules (scheduling.k8s.io/v1)."""

from __future__ import annotations

import pytest

from draplane.api import errors, kinds, meta, versions
from draplane.api.meta import Obj
from draplane.apiserver.strategies.table import DECLARED, STRATEGIES, strategy_for
from draplane.testing import kindrules
from draplane.testing.cluster import Cluster


@pytest.mark.parametrize("mode", list(versions.MODES.values()), ids=str)
def test_every_served_kind_has_a_declaration(mode: versions.Mode) -> None:
    assert [rt for rt in mode.served if rt not in STRATEGIES] == []


def test_no_kind_is_declared_twice() -> None:
    assert len({s.rt for s in DECLARED}) == len(DECLARED)


def make_priority_class(name: str = "high", value: int = 1000, **fields: object) -> Obj:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        **fields,
    }


@pytest.mark.parametrize(
    ("obj", "want"),
    [
        (make_priority_class(), []),
        (make_priority_class("system-node-critical", 2_000_001_000), []),
        (make_priority_class(value=1_000_000_001), [("value", "FieldValueForbidden")]),
        (make_priority_class("system-mine", 5), [("metadata.name", "FieldValueForbidden")]),
        (
            make_priority_class("system-cluster-critical", 5),
            [("metadata.name", "FieldValueForbidden")],
        ),
        (
            make_priority_class(preemptionPolicy="Sometimes"),
            [("preemptionPolicy", "FieldValueNotSupported")],
        ),
    ],
    ids=[
        "valid",
        "system-class",
        "above-user-max",
        "reserved-prefix",
        "wrong-system-value",
        "bad-policy",
    ],
)
def test_priority_class_create(obj: Obj, want: list[tuple[str, str]]) -> None:
    causes = kindrules.validate_create(kinds.PRIORITY_CLASSES, obj)
    assert [(c.field, c.type) for c in causes] == want


def test_priority_class_defaults_and_immutable_fields() -> None:
    old = make_priority_class()
    kindrules.default(kinds.PRIORITY_CLASSES, old)
    assert old["preemptionPolicy"] == "PreemptLowerPriority"
    new = make_priority_class(value=7, preemptionPolicy="Never")
    new["metadata"] = dict(old["metadata"])
    causes = kindrules.validate_update(kinds.PRIORITY_CLASSES, new, old)
    assert [(c.field, c.type) for c in causes] == [
        ("value", "FieldValueForbidden"),
        ("preemptionPolicy", "FieldValueInvalid"),
    ]


def test_priority_class_printer() -> None:
    printer = strategy_for(kinds.PRIORITY_CLASSES).printer
    assert [c[0] for c in printer.columns] == [
        "Name",
        "Value",
        "Global-Default",
        "Age",
        "PreemptionPolicy",
    ]


async def test_priority_classes_through_the_api(cluster: Cluster) -> None:
    admin = cluster.client()
    listed = await admin.list(kinds.PRIORITY_CLASSES)
    system = {meta.name(o): o["value"] for o in listed["items"]}
    assert system == {
        "system-cluster-critical": 2_000_000_000,
        "system-node-critical": 2_000_001_000,
    }
    made = await admin.create(
        kinds.PRIORITY_CLASSES, make_priority_class("default-high", globalDefault=True)
    )
    assert made["preemptionPolicy"] == "PreemptLowerPriority"
    with pytest.raises(errors.StatusError) as err:
        await admin.create(kinds.PRIORITY_CLASSES, make_priority_class("other", globalDefault=True))
    assert err.value.code == 403
    with pytest.raises(errors.StatusError) as err:
        await admin.create(kinds.PRIORITY_CLASSES, make_priority_class("x", 1_000_000_001))
    assert err.value.code == 422
    selected = await admin.list(kinds.PRIORITY_CLASSES, field_selector="metadata.name=default-high")
    assert [meta.name(o) for o in selected["items"]] == ["default-high"]
