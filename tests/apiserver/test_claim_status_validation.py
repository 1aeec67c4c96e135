"""ResourceClaim status updates through the API server (validateResourceClaimStatusUpdate, 1.36):
a new allocation's results name a request or `request/subrequest` of the claim, a valid driver,
pool and device; its nodeSelector is valid; its config names only the claim's requests;
reservedFor is unique by uid and bounded at 256; status.devices entries are allocated devices
(shareID included). A refused update is a 422 with upstream's causes and leaves the claim as
it was."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from draplane.api import errors, kinds, meta, versions
from draplane.api.meta import Obj
from draplane.testing.allocatorcases import allocation
from draplane.testing.cluster import Cluster
from draplane.testing.structured import device_result, make_structured_claim, make_subrequest

DRIVER = "driver.example.com"
REQ, INV, DUP = "FieldValueRequired", "FieldValueInvalid", "FieldValueDuplicate"
NOT_SUP, TOO_MANY = "FieldValueNotSupported", "FieldValueTooMany"
UNKNOWN_REQUEST = (
    "must be the name of a request in the claim or the name of a request and a subrequest "
    "separated by '/'"
)
R0 = "status.allocation.devices.results[0]"
C0 = "status.allocation.devices.config[0]"
SHARE_ID = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"


def _pod(i: int) -> Obj:
    return {"resource": "pods", "name": f"p{i}", "uid": f"uid-{i}"}


def _config(*requests: str, source: str = "FromClaim") -> Obj:
    return {
        "source": source,
        "requests": list(requests),
        "opaque": {"driver": DRIVER, "parameters": {"a": "b"}},
    }


GPU = device_result("gpu", "gpu-0")
ALLOCATED = allocation(GPU, node="node-0")


@dataclass(frozen=True)
class Case:
    status: Obj
    causes: list[tuple[str, str]] = field(default_factory=list)
    message: str = ""


CASES = [
    pytest.param(Case({"allocation": ALLOCATED}), id="allocate"),
    pytest.param(
        Case({"allocation": allocation(device_result("alt/big", "gpu-1"), node="node-0")}),
        id="subrequest-result",
    ),
    pytest.param(
        Case(
            {"allocation": allocation(device_result("other", "gpu-0"))},
            [(INV, f"{R0}.request")],
            UNKNOWN_REQUEST,
        ),
        id="unknown-request",
    ),
    pytest.param(
        Case(
            {"allocation": allocation(device_result("gpu/big", "gpu-0"))},
            [(INV, f"{R0}.request")],
            UNKNOWN_REQUEST,
        ),
        id="subrequest-of-exact-request",
    ),
    pytest.param(
        Case(
            {"allocation": allocation(device_result("alt/big/x", "gpu-0"))},
            [(INV, f"{R0}.request")],
            UNKNOWN_REQUEST,
        ),
        id="three-segments",
    ),
    pytest.param(
        Case(
            {"allocation": allocation(device_result("gpu", "gpu-0", driver="Bad Driver"))},
            [(INV, f"{R0}.driver")],
        ),
        id="bad-driver",
    ),
    pytest.param(
        Case(
            {"allocation": allocation(device_result("gpu", "gpu-0", pool=""))},
            [(REQ, f"{R0}.pool")],
        ),
        id="pool-required",
    ),
    pytest.param(
        Case(
            {"allocation": allocation(device_result("gpu", "GPU_0"))},
            [(INV, f"{R0}.device")],
        ),
        id="bad-device-name",
    ),
    pytest.param(
        Case(
            {"allocation": allocation(device_result("gpu", "gpu-0", shareID="not-a-uid"))},
            [(INV, f"{R0}.shareID")],
        ),
        id="bad-share-id",
    ),
    pytest.param(
        Case(
            {
                "allocation": allocation(
                    device_result("gpu", "gpu-0", bindingConditions=["Attached"])
                )
            },
            [(INV, f"{R0}.bindingFailureConditions")],
            "bindingFailureConditions are required to use bindingConditions",
        ),
        id="binding-conditions-alone",
    ),
    pytest.param(
        Case(
            {
                "allocation": allocation(
                    GPU,
                    node_selector={
                        "nodeSelectorTerms": [
                            {
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "Near", "values": ["n"]}
                                ]
                            }
                        ]
                    },
                )
            },
            [
                (
                    INV,
                    "status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].operator",
                )
            ],
        ),
        id="bad-node-selector",
    ),
    pytest.param(
        Case({"allocation": allocation(GPU, config=[_config("gpu", source="FromClass")])}),
        id="config-for-a-request",
    ),
    pytest.param(
        Case({"allocation": allocation(GPU, config=[_config("alt/big")])}),
        id="config-for-a-subrequest",
    ),
    pytest.param(
        Case(
            {"allocation": allocation(GPU, config=[_config("other")])},
            [(INV, f"{C0}.requests[0]")],
            UNKNOWN_REQUEST,
        ),
        id="config-unknown-request",
    ),
    pytest.param(
        Case(
            {"allocation": allocation(GPU, config=[_config("gpu", "gpu")])},
            [(DUP, f"{C0}.requests[1]")],
        ),
        id="config-duplicate-request",
    ),
    pytest.param(
        Case(
            {"allocation": allocation(GPU, config=[_config("gpu", source="FromNowhere")])},
            [(NOT_SUP, f"{C0}.source")],
        ),
        id="config-source",
    ),
    pytest.param(
        Case({"allocation": ALLOCATED, "reservedFor": [_pod(i) for i in range(256)]}),
        id="reserved-for-256",
    ),
    pytest.param(
        Case(
            {"allocation": ALLOCATED, "reservedFor": [_pod(i) for i in range(257)]},
            [(TOO_MANY, "status.reservedFor")],
        ),
        id="reserved-for-257",
    ),
    pytest.param(
        Case(
            {"allocation": ALLOCATED, "reservedFor": [_pod(1), {**_pod(2), "uid": "uid-1"}]},
            [(DUP, "status.reservedFor[1]")],
        ),
        id="reserved-for-duplicate-uid",
    ),
    pytest.param(
        Case(
            {
                "allocation": ALLOCATED,
                "devices": [{"driver": DRIVER, "pool": "pool-0", "device": "gpu-0"}],
            }
        ),
        id="device-status",
    ),
    pytest.param(
        Case(
            {
                "allocation": ALLOCATED,
                "devices": [{"driver": DRIVER, "pool": "pool-0", "device": "gpu-9"}],
            },
            [(INV, "status.devices[0]")],
            "must be an allocated device in the claim",
        ),
        id="device-status-not-allocated",
    ),
    pytest.param(
        Case(
            {
                "allocation": ALLOCATED,
                "devices": [
                    {"driver": DRIVER, "pool": "pool-0", "device": "gpu-0", "shareID": SHARE_ID}
                ],
            },
            [(INV, "status.devices[0]")],
            "must be an allocated device in the claim",
        ),
        id="device-status-other-share",
    ),
    pytest.param(
        Case(
            {
                "allocation": ALLOCATED,
                "devices": [
                    {
                        "driver": DRIVER,
                        "pool": "pool-0",
                        "device": "gpu-0",
                        "conditions": [{"type": "Ready", "status": "Maybe"}],
                    }
                ],
            },
            [
                (NOT_SUP, "status.devices[0].conditions[0].status"),
                (REQ, "status.devices[0].conditions[0].lastTransitionTime"),
                (REQ, "status.devices[0].conditions[0].reason"),
            ],
        ),
        id="device-status-conditions",
    ),
]


@pytest.fixture
def cluster_options() -> dict[str, Any]:
    return {"mode": versions.STRUCTURED}


@pytest.mark.parametrize("case", CASES)
async def test_claim_status_update(cluster: Cluster, case: Case) -> None:
    client = cluster.client()
    claim = (
        make_structured_claim("c")
        .request("gpu", "gpu")
        .first_available("alt", make_subrequest("big", "gpu"))
        .obj()
    )
    created = await client.create(kinds.RESOURCE_CLAIMS_V1, claim, "default")
    update = meta.deep_copy(created)
    update["status"] = case.status

    if not case.causes:
        updated = await client.update(kinds.RESOURCE_CLAIMS_V1, update, subresource="status")
        assert updated["status"] == case.status
        return
    with pytest.raises(errors.StatusError) as err:
        await client.update(kinds.RESOURCE_CLAIMS_V1, update, subresource="status")

    assert err.value.code == 422
    causes = err.value.details["causes"]
    assert [(c["reason"], c["field"]) for c in causes] == case.causes
    assert case.message in causes[0]["message"]
    stored = await client.get(kinds.RESOURCE_CLAIMS_V1, "c", "default")
    assert stored.get("status", {}) == created.get("status", {})
