"""Server-side apply: create, merge, ownership conflicts, force, removal of abandoned fields."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api import kinds
from draplane.api.apply import server_side_apply
from draplane.api.errors import StatusError
from draplane.api.kinds import ResourceType
from draplane.api.managed_fields import Path, fields_to_paths
from draplane.api.meta import Obj, deep_copy
from draplane.api.schema import schemas_for
from draplane.testing.builders import make_claim, make_pod, make_scheduling_context

T0 = "2026-01-01T00:00:00Z"
T1 = "2026-01-01T00:01:00Z"


def pod_config(**spec: Any) -> Obj:
    config = make_pod("web").obj()
    del config["metadata"]["uid"]
    config["spec"].update(spec)
    return config


def apply(
    live: Obj | None,
    config: Obj,
    manager: str,
    *,
    force: bool = False,
    rt: ResourceType = kinds.PODS,
    now: str = T0,
    subresource: str = "",
) -> Obj:
    return server_side_apply(
        live,
        config,
        rt,
        schemas_for(),
        field_manager=manager,
        force=force,
        now=now,
        subresource=subresource,
    )


def managers(obj: Obj) -> dict[str, set[Path]]:
    return {e["manager"]: fields_to_paths(e["fieldsV1"]) for e in obj["metadata"]["managedFields"]}


CTR = 'k:{"name":"ctr"}'


def test_create_returns_the_config_with_a_managed_fields_entry() -> None:
    config = pod_config()
    config["metadata"]["labels"] = {"app": "web"}

    created = apply(None, config, "kubectl")

    assert created["spec"] == config["spec"]
    assert created["metadata"]["managedFields"] == [
        {
            "manager": "kubectl",
            "operation": "Apply",
            "apiVersion": "v1",
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {
                    "f:containers": {CTR: {".": {}, "f:image": {}, "f:name": {}}},
                },
            },
        }
    ]


def test_create_drops_server_owned_metadata_and_nulls() -> None:
    config = pod_config(priority=None)
    config["metadata"].update(uid="x", managedFields=[{"manager": "forged"}], labels={"a": None})

    created = apply(None, config, "kubectl")

    assert created["metadata"] == {
        "name": "web",
        "namespace": "default",
        "labels": {},
        "managedFields": created["metadata"]["managedFields"],
    }
    assert "priority" not in created["spec"]
    assert [e["manager"] for e in created["metadata"]["managedFields"]] == ["kubectl"]


def test_resource_version_in_the_config_is_kept_as_a_precondition() -> None:
    live = apply(None, pod_config(priority=1), "a")
    live["metadata"]["resourceVersion"] = "7"
    config = pod_config(priority=2)
    config["metadata"]["resourceVersion"] = "6"

    result = apply(live, config, "a")

    assert result["metadata"]["resourceVersion"] == "6"
    assert ("f:metadata", "f:resourceVersion") not in managers(result)["a"]


@pytest.mark.parametrize(
    ("rt", "subresource", "expected_spec", "expected_status"),
    [
        pytest.param(kinds.PODS, "", {"priority": 2}, {"phase": "Pending"}, id="main-drops-status"),
        pytest.param(
            kinds.PODS, "status", {"priority": 1}, {"phase": "Running"}, id="status-keeps-status"
        ),
        pytest.param(
            kinds.CONFIGMAPS, "", {"priority": 2}, {"phase": "Running"}, id="no-status-subresource"
        ),
    ],
)
def test_subresource_scopes_what_is_applied(
    rt: ResourceType, subresource: str, expected_spec: Obj, expected_status: Obj
) -> None:
    live = {**pod_config(), "spec": {"priority": 1}, "status": {"phase": "Pending"}}
    config = {**pod_config(), "spec": {"priority": 2}, "status": {"phase": "Running"}}

    result = apply(live, config, "m", rt=rt, subresource=subresource)

    assert (result["spec"], result["status"]) == (expected_spec, expected_status)
    entry = result["metadata"]["managedFields"][0]
    assert entry.get("subresource", "") == subresource


def test_inputs_are_not_mutated() -> None:
    live = apply(None, pod_config(priority=1), "a")
    config = pod_config(priority=2)
    before = (deep_copy(live), deep_copy(config))

    apply(live, config, "a")

    assert (live, config) == before


def test_reapply_by_the_same_manager_changes_values_and_refreshes_time() -> None:
    live = apply(None, pod_config(priority=1), "a")

    result = apply(live, pod_config(priority=2), "a", now=T1)

    assert result["spec"]["priority"] == 2
    assert [(e["manager"], e["time"]) for e in result["metadata"]["managedFields"]] == [("a", T1)]


def test_same_value_from_two_managers_is_shared_not_a_conflict() -> None:
    live = apply(None, pod_config(priority=1), "a")

    result = apply(live, pod_config(priority=1), "b")

    assert ("f:spec", "f:priority") in managers(result)["a"]
    assert ("f:spec", "f:priority") in managers(result)["b"]


def test_conflict_with_another_apply_manager() -> None:
    live = apply(None, pod_config(priority=1), "a")

    with pytest.raises(StatusError) as info:
        apply(live, pod_config(priority=2), "b")

    assert info.value.status() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'Apply failed with 1 conflict: conflict with "a": .spec.priority',
        "reason": "Conflict",
        "code": 409,
        "details": {
            "causes": [
                {
                    "reason": "FieldManagerConflict",
                    "message": 'conflict with "a"',
                    "field": ".spec.priority",
                }
            ]
        },
    }


def test_several_conflicts_are_grouped_by_manager() -> None:
    live = apply(None, pod_config(priority=1), "a")
    labels_only = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web", "labels": {"x": "1"}},
    }
    live = apply(live, labels_only, "c")
    config = pod_config(priority=2, containers=[{"name": "ctr", "image": "other"}])
    config["metadata"]["labels"] = {"x": "2"}

    with pytest.raises(StatusError) as info:
        apply(live, config, "b")

    assert info.value.message == (
        "Apply failed with 3 conflicts: "
        'conflicts with "a":\n- .spec.containers[name="ctr"].image\n- .spec.priority\n'
        'conflicts with "c":\n- .metadata.labels.x'
    )
    assert {c["field"] for c in info.value.details["causes"]} == {
        '.spec.containers[name="ctr"].image',
        ".spec.priority",
        ".metadata.labels.x",
    }


def test_force_takes_ownership() -> None:
    live = apply(None, pod_config(priority=1), "a")

    result = apply(live, pod_config(priority=2), "b", force=True)

    assert result["spec"]["priority"] == 2
    owners = managers(result)
    assert ("f:spec", "f:priority") not in owners["a"]
    assert ("f:spec", "f:priority") in owners["b"]


def test_force_drops_an_apply_entry_left_with_nothing() -> None:
    config = make_claim("c").obj()
    live = apply(
        None, {**config, "spec": {"resourceClassName": "x"}}, "a", rt=kinds.RESOURCE_CLAIMS
    )
    live = apply(live, config, "b", rt=kinds.RESOURCE_CLAIMS, force=True)

    assert list(managers(live)) == ["b"]
    assert live["spec"]["resourceClassName"] == "example"


def test_update_managers_are_kept_and_never_conflict() -> None:
    live = apply(None, pod_config(priority=1), "a")
    live["metadata"]["managedFields"].insert(
        0,
        {
            "manager": "kube-scheduler",
            "operation": "Update",
            "apiVersion": "v1",
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:nodeName": {}}},
        },
    )

    result = apply(live, pod_config(priority=1, nodeName="n2"), "b")

    assert result["spec"]["nodeName"] == "n2"
    assert list(managers(result)) == ["kube-scheduler", "a", "b"]


@pytest.mark.parametrize(
    ("first", "second", "expected_env"),
    [
        pytest.param(
            [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
            [{"name": "A", "value": "1"}],
            [{"name": "A", "value": "1"}],
            id="omitted-item-removed",
        ),
        pytest.param(
            [{"name": "A", "value": "1"}],
            [{"name": "A", "value": "1"}, {"name": "C", "value": "3"}],
            [{"name": "A", "value": "1"}, {"name": "C", "value": "3"}],
            id="new-item-appended",
        ),
        pytest.param(
            [{"name": "A", "value": "1"}],
            [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
            [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
            id="omitted-field-of-kept-item-removed",
        ),
    ],
)
def test_list_map_items_follow_the_applied_config(
    first: list[Obj], second: list[Obj], expected_env: list[Obj]
) -> None:
    live = apply(None, pod_config(containers=[{"name": "ctr", "image": "i", "env": first}]), "a")

    result = apply(live, pod_config(containers=[{"name": "ctr", "image": "i", "env": second}]), "a")

    assert result["spec"]["containers"][0]["env"] == expected_env


def test_omitted_item_owned_by_another_manager_stays() -> None:
    env_ab = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    live = apply(None, pod_config(containers=[{"name": "ctr", "image": "i", "env": env_ab}]), "a")
    live = apply(live, pod_config(containers=[{"name": "ctr", "env": env_ab[1:]}]), "b")

    result = apply(live, pod_config(containers=[{"name": "ctr", "image": "i", "env": []}]), "a")

    assert result["spec"]["containers"][0]["env"] == [{"name": "B", "value": "2"}]


def test_omitted_container_is_removed_with_its_fields() -> None:
    two = [{"name": "ctr", "image": "i"}, {"name": "side", "image": "s"}]
    live = apply(None, pod_config(containers=two), "a")

    result = apply(live, pod_config(containers=two[:1]), "a")

    assert result["spec"]["containers"] == two[:1]
    assert ("f:spec", "f:containers", 'k:{"name":"side"}') not in managers(result)["a"]


def test_omitted_map_key_and_set_value_are_removed() -> None:
    config = pod_config()
    config["metadata"].update(labels={"a": "1", "b": "2"}, finalizers=["x", "y"])
    live = apply(None, config, "m")
    config["metadata"].update(labels={"a": "1"}, finalizers=["y"])

    result = apply(live, config, "m")

    assert (result["metadata"]["labels"], result["metadata"]["finalizers"]) == ({"a": "1"}, ["y"])


def test_finalizers_from_two_managers_are_a_set_union() -> None:
    first = pod_config()
    first["metadata"]["finalizers"] = ["x"]
    second = pod_config()
    second["metadata"]["finalizers"] = ["y", "x"]

    result = apply(apply(None, first, "a"), second, "b")

    assert result["metadata"]["finalizers"] == ["x", "y"]


def test_atomic_list_is_replaced_as_a_whole() -> None:
    live = apply(None, pod_config(tolerations=[{"key": "a"}, {"key": "b"}]), "m")

    result = apply(live, pod_config(tolerations=[{"key": "c"}]), "m")

    assert result["spec"]["tolerations"] == [{"key": "c"}]
    assert ("f:spec", "f:tolerations") in managers(result)["m"]


def test_reserved_for_is_a_list_map_keyed_by_uid() -> None:
    claim = make_claim("c").obj()
    del claim["metadata"]["uid"]
    live = apply(None, claim, "ctrl", rt=kinds.RESOURCE_CLAIMS)
    ref_a = {"resource": "pods", "name": "a", "uid": "uid-a"}
    ref_b = {"resource": "pods", "name": "b", "uid": "uid-b"}

    def reserve(live: Obj, refs: list[Obj], manager: str) -> Obj:
        config = {**claim, "status": {"reservedFor": refs}}
        return apply(live, config, manager, rt=kinds.RESOURCE_CLAIMS, subresource="status")

    live = reserve(reserve(live, [ref_a], "s1"), [ref_b], "s2")
    assert live["status"]["reservedFor"] == [ref_a, ref_b]

    live = reserve(live, [], "s1")
    assert live["status"]["reservedFor"] == [ref_b]
    assert live["spec"] == claim["spec"]


def test_scheduling_context_claims_keyed_by_name_with_node_sets() -> None:
    psc = make_scheduling_context(make_pod("p").obj()).obj()
    rt = kinds.POD_SCHEDULING_CONTEXTS
    gpu = {"name": "gpu", "unsuitableNodes": ["n1"]}
    fpga = {"name": "fpga", "unsuitableNodes": ["n2"]}
    live = apply(None, psc, "scheduler", rt=rt)
    live = apply(
        live, {**psc, "status": {"resourceClaims": [gpu]}}, "d1", rt=rt, subresource="status"
    )

    result = apply(
        live, {**psc, "status": {"resourceClaims": [fpga]}}, "d2", rt=rt, subresource="status"
    )

    assert result["status"]["resourceClaims"] == [gpu, fpga]
    assert (
        "f:status",
        "f:resourceClaims",
        'k:{"name":"gpu"}',
        "f:unsuitableNodes",
        'v:"n1"',
    ) in managers(result)["d1"]


@pytest.mark.parametrize(
    ("server_default", "applied_port", "expected"),
    [
        pytest.param(
            {"protocol": "TCP"},
            {"containerPort": 80},
            {"containerPort": 80, "protocol": "TCP", "name": "http"},
            id="config-omits-defaulted-key",
        ),
        pytest.param(
            {},
            {"containerPort": 80, "protocol": "TCP"},
            {"containerPort": 80, "protocol": "TCP", "name": "http"},
            id="config-adds-key-field",
        ),
    ],
)
def test_list_map_items_match_despite_defaulted_key_fields(
    server_default: Obj, applied_port: Obj, expected: Obj
) -> None:
    first = pod_config(containers=[{"name": "ctr", "ports": [{"containerPort": 80}]}])
    live = apply(None, first, "m")
    live["spec"]["containers"][0]["ports"][0].update(server_default)
    config = pod_config(containers=[{"name": "ctr", "ports": [{**applied_port, "name": "http"}]}])

    result = apply(live, config, "m")

    assert result["spec"]["containers"][0]["ports"] == [expected]
