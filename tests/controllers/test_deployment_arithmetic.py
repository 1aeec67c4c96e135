"""The Deployment controller's pure parts, table-driven: the pod-template-hash, maxSurge and
maxUnavailable rounding, the new ReplicaSet's next size, rolling-update scale-down steps,
proportional scaling, revisions and annotations."""

from __future__ import annotations

import pytest

from draplane.api.meta import Obj
from draplane.controllers.controller_utils import fnv32a, safe_encode_string
from draplane.controllers.deployment_scale import (
    is_scaling_event,
    new_rs_new_replicas,
    old_scale_down,
    proportional_scale,
)
from draplane.controllers.deployment_util import (
    REVISION,
    REVISION_HISTORY,
    compute_hash,
    copyable_annotations,
    equal_ignore_hash,
    find_new_replica_set,
    last_revision,
    max_unavailable,
    new_replica_set,
    resolve_fenceposts,
    set_new_replica_set_annotations,
)

from .workloads import TEMPLATE, deployment, replica_set


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(b"", 0x811C9DC5, id="empty is the offset basis"),
        pytest.param(b"a", 0xE40C292C, id="a"),
        pytest.param(b"foobar", 0xBF9CF968, id="foobar"),
    ],
)
def test_fnv32a_matches_the_reference_vectors(data: bytes, expected: int) -> None:
    assert fnv32a(data) == expected


def test_safe_encoding_maps_digits_into_the_alphabet() -> None:
    # '0' is 48: 48 % 27 = 21 -> '4'; '9' is 57: 57 % 27 = 3 -> 'f'.
    assert safe_encode_string("09") == "4f"


@pytest.mark.parametrize(
    ("collision_count", "other", "same"),
    [
        pytest.param(None, None, True, id="deterministic"),
        pytest.param(None, 1, False, id="a collision count changes the hash"),
        pytest.param(1, 2, False, id="each count differs"),
    ],
)
def test_compute_hash(collision_count: int | None, other: int | None, same: bool) -> None:
    first = compute_hash(TEMPLATE, collision_count)
    assert set(first) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert (first == compute_hash(TEMPLATE, other)) is same


@pytest.mark.parametrize(
    ("replicas", "surge", "unavailable", "expected"),
    [
        pytest.param(10, None, None, (3, 2), id="25% of 10: surge rounds up, unavailable down"),
        pytest.param(3, None, None, (1, 0), id="25% of 3"),
        pytest.param(1, 0, 0, (0, 1), id="both zero makes unavailable 1"),
        pytest.param(4, "50%", 1, (2, 1), id="percent and int"),
        pytest.param(5, 2, "100%", (2, 5), id="all unavailable"),
    ],
)
def test_resolve_fenceposts(
    replicas: int, surge: object, unavailable: object, expected: tuple[int, int]
) -> None:
    d = deployment(replicas, surge=surge, unavailable=unavailable)  # type: ignore[arg-type]
    assert resolve_fenceposts(d) == expected


@pytest.mark.parametrize(
    ("d", "expected"),
    [
        pytest.param(deployment(0), 0, id="no replicas"),
        pytest.param(deployment(4, strategy="Recreate"), 0, id="recreate"),
        pytest.param(deployment(2, surge=0, unavailable=5), 2, id="capped at replicas"),
    ],
)
def test_max_unavailable(d: Obj, expected: int) -> None:
    assert max_unavailable(d) == expected


@pytest.mark.parametrize(
    ("d", "rss", "expected"),
    [
        pytest.param(
            deployment(10, surge=3),
            [replica_set("old", 10), replica_set("new", 0)],
            3,
            id="surge above desired",
        ),
        pytest.param(
            deployment(10, surge=3),
            [replica_set("old", 10), replica_set("new", 3)],
            3,
            id="at the surge limit: stays",
        ),
        pytest.param(
            deployment(10, surge=3),
            [replica_set("old", 2), replica_set("new", 6)],
            10,
            id="never above desired",
        ),
        pytest.param(
            deployment(10, strategy="Recreate"),
            [replica_set("old", 10), replica_set("new", 0)],
            10,
            id="recreate goes to desired",
        ),
    ],
)
def test_new_rs_new_replicas(d: Obj, rss: list[Obj], expected: int) -> None:
    assert new_rs_new_replicas(d, rss, rss[-1]) == expected


@pytest.mark.parametrize(
    ("d", "old", "new", "expected"),
    [
        pytest.param(
            deployment(10, surge=3, unavailable=2),
            [replica_set("old", 10, available=10)],
            replica_set("new", 3, created=1),
            {"old": 8},
            id="availability above desired - maxUnavailable goes",
        ),
        pytest.param(
            deployment(10, surge=3, unavailable=2),
            [replica_set("old", 8, available=8)],
            replica_set("new", 5, available=0, created=1),
            {},
            id="new pods unavailable: wait",
        ),
        pytest.param(
            deployment(10, surge=3, unavailable=2),
            [replica_set("older", 3, available=0), replica_set("old", 7, available=7, created=1)],
            replica_set("new", 3, created=2),
            {"older": 1},
            id="unavailable old replicas go first, within the budget",
        ),
        pytest.param(
            deployment(10, surge=3, unavailable=2),
            [replica_set("older", 2, available=0), replica_set("old", 8, available=8, created=1)],
            replica_set("new", 3, available=3, created=2),
            {"older": 0, "old": 5},
            id="then the availability above the minimum, oldest first",
        ),
        pytest.param(
            deployment(3, surge=1, unavailable=0),
            [replica_set("old", 3, available=3)],
            replica_set("new", 1, available=1, created=1),
            {"old": 2},
            id="maxUnavailable 0: one for one",
        ),
        pytest.param(
            deployment(3, surge=1, unavailable=0),
            [replica_set("old", 0)],
            replica_set("new", 3, available=3, created=1),
            {},
            id="nothing left to scale down",
        ),
    ],
)
def test_old_scale_down(d: Obj, old: list[Obj], new: Obj, expected: dict[str, int]) -> None:
    assert old_scale_down(d, [new, *old], old, new) == expected


@pytest.mark.parametrize(
    ("d", "new", "old", "expected"),
    [
        pytest.param(
            deployment(5),
            replica_set("new", 3, desired=3),
            [],
            {"new": 5},
            id="one active replica set takes desired",
        ),
        pytest.param(
            deployment(5),
            replica_set("new", 5, desired=5, available=5),
            [replica_set("old", 2, desired=5)],
            {"old": 0},
            id="saturated new: old to zero",
        ),
        pytest.param(
            deployment(20, surge=3, unavailable=2, status={"replicas": 13}),
            replica_set("new", 5, desired=10, max_replicas=13, created=1),
            [replica_set("old", 8, desired=10, max_replicas=13)],
            {"new": 9, "old": 14},
            id="scale up 10 -> 20 proportionally",
        ),
        pytest.param(
            deployment(5, surge=1, unavailable=0, status={"replicas": 11}),
            replica_set("new", 4, desired=10, max_replicas=11, created=1),
            [replica_set("old", 7, desired=10, max_replicas=11)],
            {"old": 4, "new": 2},
            id="scale down 10 -> 5 proportionally",
        ),
    ],
)
def test_proportional_scale(d: Obj, new: Obj, old: list[Obj], expected: dict[str, int]) -> None:
    assert proportional_scale(d, new, old) == expected


@pytest.mark.parametrize(
    ("rss", "expected"),
    [
        pytest.param([replica_set("a", 3, desired=3)], False, id="annotation agrees"),
        pytest.param([replica_set("a", 3, desired=2)], True, id="annotation differs"),
        pytest.param([replica_set("a", 0, desired=2)], False, id="inactive ignored"),
        pytest.param([replica_set("a", 3)], False, id="no annotation"),
    ],
)
def test_is_scaling_event(rss: list[Obj], expected: bool) -> None:
    assert is_scaling_event(deployment(3), rss) is expected


def test_new_replica_set_carries_hash_label_selector_owner_and_annotations() -> None:
    d = deployment(4, surge=1)
    d["metadata"]["annotations"] = {
        "team": "a",
        "kubectl.kubernetes.io/last-applied-configuration": "{}",
    }
    rs = new_replica_set(d, "abc", 1, 3)
    assert rs["metadata"]["name"] == "web-abc"
    assert rs["metadata"]["labels"] == {"app": "web", "pod-template-hash": "abc"}
    assert rs["spec"]["selector"] == {"matchLabels": {"app": "web", "pod-template-hash": "abc"}}
    assert rs["spec"]["template"]["metadata"]["labels"]["pod-template-hash"] == "abc"
    assert rs["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": "web",
            "uid": "d-uid",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert rs["metadata"]["annotations"] == {
        "team": "a",
        REVISION: "3",
        "deployment.kubernetes.io/desired-replicas": "4",
        "deployment.kubernetes.io/max-replicas": "5",
    }


def test_long_deployment_names_are_cut_to_fit() -> None:
    d = deployment()
    d["metadata"]["name"] = "x" * 253
    assert len(new_replica_set(d, "abcdefghij", 0, 1)["metadata"]["name"]) == 253


@pytest.mark.parametrize(
    ("old_revision", "history", "new_revision", "expected_revision", "expected_history"),
    [
        pytest.param(None, None, 1, "1", None, id="first revision"),
        pytest.param("2", None, 5, "5", "2", id="rollback records the old revision"),
        pytest.param("2", "1", 5, "5", "1,2", id="history appends"),
        pytest.param("5", None, 3, "5", None, id="never lowered"),
    ],
)
def test_revision_annotations(
    old_revision: str | None,
    history: str | None,
    new_revision: int,
    expected_revision: str,
    expected_history: str | None,
) -> None:
    rs = replica_set("a", 1)
    if old_revision:
        rs["metadata"]["annotations"][REVISION] = old_revision
    if history:
        rs["metadata"]["annotations"][REVISION_HISTORY] = history
    set_new_replica_set_annotations(deployment(), rs, new_revision, exists=True)
    assert rs["metadata"]["annotations"][REVISION] == expected_revision
    assert rs["metadata"]["annotations"].get(REVISION_HISTORY) == expected_history


def test_find_new_replica_set_ignores_the_hash_label_and_takes_the_oldest() -> None:
    d = deployment()
    rss = [
        replica_set("b", 1, created=2),
        replica_set("a", 1, created=1),
        replica_set("other", 1, image="nginx:2"),
    ]
    found = find_new_replica_set(d, rss)
    assert found is not None and found["metadata"]["name"] == "a"
    assert not equal_ignore_hash(rss[2]["spec"]["template"], TEMPLATE)


def test_last_revision_and_rollback_annotations() -> None:
    rss = [replica_set(n, 0, revision=r) for n, r in (("a", 1), ("b", 3), ("c", 2))]
    assert last_revision(rss) == 2
    d = deployment()
    d["metadata"]["annotations"] = {REVISION: "3", "team": "x"}
    rss[0]["metadata"]["annotations"]["kubernetes.io/change-cause"] = "v1"
    assert copyable_annotations(d, rss[0]) == {REVISION: "3", "kubernetes.io/change-cause": "v1"}
