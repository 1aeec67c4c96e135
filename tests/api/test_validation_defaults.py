"""Defaulting per kind (SetDefaults_* and create-time status)."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api import kinds
from draplane.api.meta import Obj
from draplane.testing import kindrules as validation
from draplane.testing.builders import make_claim, make_node, make_pod, make_template


def test_pod_spec_defaults() -> None:
    pod = make_pod().obj()
    validation.default(kinds.PODS, pod)
    spec = pod["spec"]
    assert spec["restartPolicy"] == "Always"
    assert spec["schedulerName"] == "default-scheduler"
    assert spec["terminationGracePeriodSeconds"] == 30
    assert spec["dnsPolicy"] == "ClusterFirst"
    assert spec["priority"] == 0
    assert spec["enableServiceLinks"] is True
    ctr = spec["containers"][0]
    assert ctr["terminationMessagePath"] == "/dev/termination-log"
    assert ctr["terminationMessagePolicy"] == "File"
    assert pod["status"] == {"phase": "Pending", "qosClass": "BestEffort"}


def test_pod_defaults_keep_explicit_values() -> None:
    pod = (
        make_pod()
        .scheduler_name("my-scheduler")
        .priority(7)
        .set("spec.restartPolicy", "Never")
        .set("spec.enableServiceLinks", False)
        .obj()
    )
    validation.default(kinds.PODS, pod)
    assert pod["spec"]["schedulerName"] == "my-scheduler"
    assert pod["spec"]["priority"] == 7
    assert pod["spec"]["restartPolicy"] == "Never"
    assert pod["spec"]["enableServiceLinks"] is False


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        pytest.param("busybox", "Always", id="no-tag"),
        pytest.param("busybox:latest", "Always", id="latest"),
        pytest.param("busybox:1.36", "IfNotPresent", id="tag"),
        pytest.param("registry:5000/busybox", "Always", id="registry-port-no-tag"),
        pytest.param("registry:5000/busybox:1", "IfNotPresent", id="registry-port-tag"),
        pytest.param("busybox@sha256:abc", "IfNotPresent", id="digest"),
    ],
)
def test_image_pull_policy(image: str, policy: str) -> None:
    pod = make_pod().obj()
    pod["spec"]["containers"][0]["image"] = image
    validation.default(kinds.PODS, pod)
    assert pod["spec"]["containers"][0]["imagePullPolicy"] == policy


@pytest.mark.parametrize(
    ("resources", "qos", "requests"),
    [
        pytest.param({}, "BestEffort", None, id="best-effort"),
        pytest.param({"requests": {"cpu": "100m"}}, "Burstable", {"cpu": "100m"}, id="burstable"),
        pytest.param(
            {"limits": {"cpu": "1", "memory": "1Gi"}},
            "Guaranteed",
            {"cpu": "1", "memory": "1Gi"},
            id="limits-copied-to-requests",
        ),
        pytest.param(
            {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}},
            "Burstable",
            {"cpu": "500m", "memory": "1Gi"},
            id="partial-requests",
        ),
    ],
)
def test_pod_resources_and_qos(resources: Obj, qos: str, requests: Obj | None) -> None:
    pod = make_pod().obj()
    pod["spec"]["containers"][0]["resources"] = resources
    validation.default(kinds.PODS, pod)
    assert pod["status"]["qosClass"] == qos
    assert pod["spec"]["containers"][0]["resources"].get("requests") == requests


def test_container_port_protocol_defaults_to_tcp() -> None:
    pod = make_pod().obj()
    pod["spec"]["containers"][0]["ports"] = [{"containerPort": 80}]
    validation.default(kinds.PODS, pod)
    assert pod["spec"]["containers"][0]["ports"][0]["protocol"] == "TCP"


def test_claim_and_template_allocation_mode() -> None:
    claim = make_claim().obj()
    del claim["spec"]["allocationMode"]
    template = make_template().obj()
    del template["spec"]["spec"]["allocationMode"]
    immediate = make_claim().allocation_mode("Immediate").obj()
    validation.default(kinds.RESOURCE_CLAIMS, claim)
    validation.default(kinds.RESOURCE_CLAIM_TEMPLATES, template)
    validation.default(kinds.RESOURCE_CLAIMS, immediate)
    assert claim["spec"]["allocationMode"] == "WaitForFirstConsumer"
    assert template["spec"]["spec"]["allocationMode"] == "WaitForFirstConsumer"
    assert immediate["spec"]["allocationMode"] == "Immediate"


def test_namespace_defaults() -> None:
    ns: Obj = {"metadata": {"name": "a"}}
    validation.default(kinds.NAMESPACES, ns)
    assert ns["spec"] == {"finalizers": ["kubernetes"]}
    assert ns["status"] == {"phase": "Active"}


def test_node_allocatable_defaults_to_capacity() -> None:
    node = make_node().obj()
    del node["status"]["allocatable"]
    validation.default(kinds.NODES, node)
    assert node["status"]["allocatable"] == node["status"]["capacity"]


def test_event_timestamps_default_to_creation_time() -> None:
    event: Obj = {"metadata": {"name": "e", "creationTimestamp": "2026-01-01T00:00:00Z"}}
    validation.default(kinds.EVENTS, event)
    assert event["firstTimestamp"] == event["lastTimestamp"] == "2026-01-01T00:00:00Z"
    assert event["count"] == 1
    new_style: Obj = {"metadata": {"creationTimestamp": "x"}, "eventTime": "y"}
    validation.default(kinds.EVENTS, new_style)
    assert "firstTimestamp" not in new_style


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param({"spec": "x"}, id="spec-string"),
        pytest.param({"spec": {"containers": "x", "initContainers": [1]}}, id="containers"),
        pytest.param({"spec": {"containers": [{"resources": {"limits": "x"}}]}}, id="limits"),
        pytest.param(
            {"spec": {"containers": [{"resources": {"limits": {"cpu": "x"}}}]}}, id="bad-quantity"
        ),
        pytest.param({"status": "x", "spec": {}}, id="status-string"),
        pytest.param([], id="not-a-dict"),
    ],
)
def test_defaulting_malformed_objects_does_not_raise(obj: Any) -> None:
    for rt in kinds.SERVED:
        validation.default(rt, obj)
