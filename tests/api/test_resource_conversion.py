"""Conversion of resource.k8s.io's structured kinds between v1beta1, v1beta2 and v1: the
request fields v1beta1 has flat and v1 in `exactly`, the slice device fields v1beta1 nests in
`basic`, and lossless round trips."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api import resourceconversion
from draplane.api.meta import Obj

EXACT = {
    "deviceClassName": "gpu",
    "selectors": [{"cel": {"expression": "true"}}],
    "allocationMode": "ExactCount",
    "count": 2,
    "adminAccess": True,
    "tolerations": [{"key": "k", "operator": "Exists"}],
    "capacity": {"requests": {"memory": "1Gi"}},
}
FIRST = [{"name": "s", "deviceClassName": "gpu", "allocationMode": "All"}]
BASIC = {
    "attributes": {"model": {"string": "a"}},
    "capacity": {"memory": {"value": "8Gi"}},
    "taints": [{"key": "k", "effect": "NoSchedule"}],
    "bindsToNode": True,
}


# Hand-built, not draplane.testing.structured: the pairs hold each version's own shape (v1beta1's
# flat requests and `basic` devices), which the v1 builders do not write.
def _claim(version: str, requests: list[Obj], template: bool = False) -> Obj:
    spec = {"devices": {"requests": requests, "constraints": [{"matchAttribute": "a.io/b"}]}}
    return {
        "apiVersion": f"resource.k8s.io/{version}",
        "kind": "ResourceClaimTemplate" if template else "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {"metadata": {"labels": {"a": "b"}}, "spec": spec} if template else spec,
        **({} if template else {"status": {"reservedFor": [{"resource": "pods"}]}}),
    }


def _slice(version: str, devices: list[Obj], **spec: Any) -> Obj:
    return {
        "apiVersion": f"resource.k8s.io/{version}",
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {"driver": "d.example.com", "pool": {"name": "p"}, "devices": devices, **spec},
    }


PAIRS = [
    pytest.param(
        _claim("v1beta1", [{"name": "r", **EXACT}]),
        _claim("v1", [{"name": "r", "exactly": EXACT}]),
        id="claim-exact",
    ),
    pytest.param(
        _claim("v1beta1", [{"name": "r", "firstAvailable": FIRST}]),
        _claim("v1", [{"name": "r", "firstAvailable": FIRST}]),
        id="claim-first-available-has-no-exactly",
    ),
    pytest.param(
        _claim("v1beta1", [{"name": "r", **EXACT}], template=True),
        _claim("v1", [{"name": "r", "exactly": EXACT}], template=True),
        id="template",
    ),
    pytest.param(
        _slice("v1beta1", [{"name": "d", "basic": BASIC}], nodeName="n"),
        _slice("v1", [{"name": "d", **BASIC}], nodeName="n"),
        id="slice-basic",
    ),
    pytest.param(
        _slice("v1beta1", [{"name": "d", "basic": {}}], allNodes=True),
        _slice("v1", [{"name": "d"}], allNodes=True),
        id="slice-empty-basic",
    ),
]


@pytest.mark.parametrize(("beta1", "v1"), PAIRS)
def test_v1beta1_and_v1(beta1: Obj, v1: Obj) -> None:
    assert resourceconversion.convert(beta1, "v1") == v1
    assert resourceconversion.convert(v1, "v1beta1") == beta1


@pytest.mark.parametrize(("beta1", "v1"), PAIRS)
def test_round_trips_through_every_version(beta1: Obj, v1: Obj) -> None:
    beta2 = resourceconversion.convert(v1, "v1beta2")

    assert beta2 == {**v1, "apiVersion": "resource.k8s.io/v1beta2"}
    assert (
        resourceconversion.convert(resourceconversion.convert(beta2, "v1beta1"), "v1beta2") == beta2
    )
    assert (
        resourceconversion.convert(resourceconversion.convert(beta1, "v1beta2"), "v1beta1") == beta1
    )
    assert resourceconversion.convert(resourceconversion.convert(v1, "v1beta1"), "v1") == v1


def test_v1beta1_empty_node_fields_are_absent_in_v1() -> None:
    beta1 = _slice("v1beta1", [], nodeName="", allNodes=False, perDeviceNodeSelection=True)

    converted = resourceconversion.convert(beta1, "v1")

    assert converted["spec"] == {
        "driver": "d.example.com",
        "pool": {"name": "p"},
        "devices": [],
        "perDeviceNodeSelection": True,
    }


def test_lists_convert_their_items() -> None:
    listed = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimList",
        "metadata": {"resourceVersion": "5"},
        "items": [_claim("v1", [{"name": "r", "exactly": EXACT}])],
    }

    converted = resourceconversion.convert(listed, "v1beta1")

    assert converted["apiVersion"] == "resource.k8s.io/v1beta1"
    assert converted["items"] == [_claim("v1beta1", [{"name": "r", **EXACT}])]


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param({"apiVersion": "v1", "kind": "Pod"}, id="other-kind"),
        pytest.param({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim"}, id="same"),
        pytest.param({"kind": "ResourceClaim", "spec": []}, id="no-api-version"),
        pytest.param("text", id="not-an-object"),
    ],
)
def test_anything_else_is_returned_as_is(obj: Any) -> None:
    assert resourceconversion.convert(obj, "v1") == obj


def test_malformed_fields_are_carried_over() -> None:
    obj = _claim("v1beta1", [])
    obj["spec"]["devices"]["requests"] = "oops"

    assert resourceconversion.convert(obj, "v1")["spec"]["devices"]["requests"] == "oops"
