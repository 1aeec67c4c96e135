"""dra.extended: which DeviceClass serves an extended resource, and the requests and request
mappings of a pod's extended-resource claim (container-<i>-request-<j>)."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api.meta import Obj
from draplane.dra import extended
from draplane.dra.extended import ExtendedRequest
from draplane.testing.builders import make_pod
from draplane.testing.structured import make_device_class


def _class(name: str, resource: str = "", created: str = "2026-01-01T00:00:00Z") -> Obj:
    """A DeviceClass created at `created`, serving the extended resource `resource` if given."""
    b = make_device_class(name).creation_timestamp(created)
    return (b.extended_resource_name(resource) if resource else b).obj()


IMPLICIT = "deviceclass.resource.kubernetes.io/"


@pytest.mark.parametrize(
    ("classes", "expected"),
    [
        pytest.param([], {}, id="none"),
        pytest.param([_class("gpu")], {IMPLICIT + "gpu": "gpu"}, id="implicit-name-only"),
        pytest.param(
            [_class("gpu", "example.com/gpu")],
            {IMPLICIT + "gpu": "gpu", "example.com/gpu": "gpu"},
            id="explicit-and-implicit",
        ),
        pytest.param(
            [
                _class("old", "example.com/gpu", "2026-01-01T00:00:00Z"),
                _class("new", "example.com/gpu", "2026-02-01T00:00:00Z"),
            ],
            {IMPLICIT + "old": "old", IMPLICIT + "new": "new", "example.com/gpu": "new"},
            id="newest-class-wins",
        ),
        pytest.param(
            [_class("b", "example.com/gpu"), _class("a", "example.com/gpu")],
            {IMPLICIT + "a": "a", IMPLICIT + "b": "b", "example.com/gpu": "a"},
            id="same-age-first-name-wins",
        ),
    ],
)
def test_class_mapping(classes: list[Obj], expected: dict[str, str]) -> None:
    assert extended.class_mapping(classes) == expected


MAPPING = {"example.com/gpu": "gpu", "example.com/nic": "nic", IMPLICIT + "fpga": "fpga"}


def _ctr(name: str, **requests: Any) -> Obj:
    return {"name": name, "image": "pause", "resources": {"requests": requests}}


def _req(container: str, resource: str, request: str, cls: str, count: int) -> ExtendedRequest:
    return ExtendedRequest(container, resource, request, cls, count)


GPU, NIC = "example.com/gpu", "example.com/nic"

CASES = [
    pytest.param([_ctr("a", cpu="1")], [], [], id="no-extended-resources"),
    pytest.param(
        [_ctr("a", **{GPU: "2"})], [], [_req("a", GPU, "container-0-request-0", "gpu", 2)],
        id="one-container",
    ),
    pytest.param(
        # j is the index in the container's sorted request names (cpu, example.com/gpu, ...).
        [_ctr("a", **{"cpu": "1", NIC: "1", GPU: "3"})], [],
        [
            _req("a", GPU, "container-0-request-1", "gpu", 3),
            _req("a", NIC, "container-0-request-2", "nic", 1),
        ],
        id="index-of-sorted-request-names",
    ),
    pytest.param(
        # i counts init containers first.
        [_ctr("main", **{GPU: "1"})], [_ctr("init", **{NIC: "1"})],
        [
            _req("init", NIC, "container-0-request-0", "nic", 1),
            _req("main", GPU, "container-1-request-0", "gpu", 1),
        ],
        id="init-containers-first",
    ),
    pytest.param(
        [_ctr("a", **{IMPLICIT + "fpga": "1"}), _ctr("b", **{"example.com/other": "1"})], [],
        [_req("a", IMPLICIT + "fpga", "container-0-request-0", "fpga", 1)],
        id="implicit-class-name-and-unmapped-resource",
    ),
    pytest.param(
        [_ctr("a", **{GPU: "0"}), _ctr("b", **{GPU: "500m"})], [], [],
        id="zero-and-fractional-skipped",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("containers", "init", "expected"), CASES)
def test_extended_requests(
    containers: list[Obj], init: list[Obj], expected: list[ExtendedRequest]
) -> None:
    pod = make_pod("p").set("spec.containers", containers).set("spec.initContainers", init).obj()

    assert extended.extended_requests(pod, MAPPING) == expected


def test_claim_requests_and_status_mappings() -> None:
    requests = [_req("a", GPU, "container-0-request-0", "gpu", 2)]

    assert extended.device_requests(requests) == [
        {
            "name": "container-0-request-0",
            "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2},
        }
    ]
    assert extended.request_mappings(requests) == [
        {"containerName": "a", "resourceName": GPU, "requestName": "container-0-request-0"}
    ]


@pytest.mark.parametrize(
    ("status", "pod_claim"),
    [
        pytest.param({}, None, id="none"),
        pytest.param(
            {"extendedResourceClaimStatus": {"resourceClaimName": "c", "requestMappings": []}},
            {"name": "<extended-resources>", "resourceClaimName": "c"},
            id="recorded",
        ),
    ],
)
def test_pod_claim_of_the_recorded_claim(status: Obj, pod_claim: Obj | None) -> None:
    pod = make_pod("p").set("status", status).obj()

    assert extended.pod_claim(pod) == pod_claim
