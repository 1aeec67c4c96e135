"""Pure parts of the pod sync: generateName construction and the generated claim's shape."""

from __future__ import annotations

import pytest

from draplane.controllers.resourceclaim_pod import build_claim, generate_name
from draplane.dra.claims import ANNOTATION_POD_CLAIM_NAME
from draplane.testing.builders import make_pod, make_template


@pytest.mark.parametrize(
    ("pod_name", "claim_name", "expected"),
    [
        pytest.param("test-pod", "acme-resource", "test-pod-acme-resource-", id="short"),
        pytest.param("p" * 40, "c" * 30, "p" * 31 + "-" + "c" * 23, id="both-truncated"),
        pytest.param("p" * 30, "c" * 26, "p" * 29 + "-" + "c" * 25, id="hyphen-pushes-over"),
        pytest.param("p" * 30, "c" * 27, "p" * 28 + "-" + "c" * 26, id="just-over"),
        pytest.param("p" * 30, "c" * 25, "p" * 30 + "-" + "c" * 25 + "-", id="exactly-57"),
        pytest.param("p" * 63, "c" * 63, "p" * 28 + "-" + "c" * 28, id="both-long"),
        pytest.param("p" * 250, "c", "p" * 56 + "-", id="claim-part-empty"),
        pytest.param(
            "a" * 32 + "." + "b" * 25, "c" * 40, "a" * 32 + "-" + "c" * 22, id="no-dot-at-cut"
        ),
        pytest.param("p", "c" * 63, "p-" + "c" * 54, id="pod-part-never-cut-to-nothing"),
    ],
)
def test_generate_name(pod_name: str, claim_name: str, expected: str) -> None:
    assert generate_name(pod_name, claim_name) == expected
    assert len(expected) <= 57


def test_build_claim_copies_the_template_and_owns_the_claim() -> None:
    pod = make_pod("my-pod").claim_template("acme", "t").obj()
    template = (
        make_template("t")
        .claim_label("team", "a")
        .claim_annotation("note", "x")
        .claim_annotation(ANNOTATION_POD_CLAIM_NAME, "overridden")
        .allocation_mode("Immediate")
        .obj()
    )
    claim = build_claim(pod=pod, pod_claim=pod["spec"]["resourceClaims"][0], template=template)
    assert claim == {
        "apiVersion": "resource.k8s.io/v1alpha2",
        "kind": "ResourceClaim",
        "metadata": {
            "generateName": "my-pod-acme-",
            "namespace": "default",
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": "my-pod",
                    "uid": pod["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "annotations": {"note": "x", ANNOTATION_POD_CLAIM_NAME: "acme"},
            "labels": {"team": "a"},
        },
        "spec": {"resourceClassName": "example", "allocationMode": "Immediate"},
    }
    # The template (an informer object) is left as it was.
    annotations = template["spec"]["metadata"]["annotations"]
    assert annotations[ANNOTATION_POD_CLAIM_NAME] == "overridden"
