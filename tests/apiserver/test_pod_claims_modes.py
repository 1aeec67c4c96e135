"""core/v1 pod claims as each mode serves them, through the registry: 1.28's `source`, 1.36's
`resourceClaimName` / `resourceClaimTemplateName` on the entry (validation causes and field
paths, Strict field validation, defaulted serialization, strategic merge patches, OpenAPI,
`status.extendedResourceClaimStatus` and NodeRestriction on it, and the claims `pods/log`
resolves)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
import pytest_asyncio

from draplane.api import errors, kinds, versions
from draplane.api.auth import ADMIN_USER, node_user
from draplane.api.catalog import Catalog
from draplane.api.meta import Obj, deep_copy
from draplane.api.request import Options, Request
from draplane.apiserver import containerlogs, openapi
from draplane.testing.builders import make_pod
from draplane.testing.cluster import Cluster, start_cluster
from draplane.testing.workloadbuilders import make_deployment

pytestmark = pytest.mark.asyncio(loop_scope="module")

REQ, INV, DUP = "FieldValueRequired", "FieldValueInvalid", "FieldValueDuplicate"
MODES = {"1.28": versions.CLASSIC, "1.36": versions.STRUCTURED}
_count = [0]


# Not the suite's `cluster`: one cluster per mode, each shared by the whole module.
@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def clusters() -> AsyncIterator[dict[str, Cluster]]:
    started = {name: await start_cluster(mode=mode) for name, mode in MODES.items()}
    yield started
    for cluster in started.values():
        await cluster.stop()


def _pod(*claims: Obj, name: str = "") -> Obj:
    """A pod with the `spec.resourceClaims` entries `claims` as given (named p1, p2, ...)."""
    _count[0] += 1
    pod = make_pod(name or f"p{_count[0]}").set("spec.resourceClaims", list(claims)).obj()
    del pod["metadata"]["uid"]  # the API server assigns it
    return pod


async def _create(cluster: Cluster, pod: Obj, validation: str = "") -> Obj:
    req = Request(
        "create", kinds.PODS, "default", body=pod, options=Options(field_validation=validation)
    )
    created = await cluster.registry.handle(ADMIN_USER, req)
    assert isinstance(created, dict)
    return created


def _causes(err: errors.StatusError) -> list[tuple[str, str, str]]:
    causes = (err.details or {}).get("causes") or []
    return [(c["reason"], c["field"], c["message"]) for c in causes]


ONE_OF = "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"
AT_MOST = "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"
BAD_NAME = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
BOTH = {"resourceClaimName": "c", "resourceClaimTemplateName": "t"}

INVALID_CASES = [
    pytest.param(
        "1.28", {"name": "gpu", "source": {}}, [(INV, "[0].source", ONE_OF)], id="1.28-empty-source"
    ),
    pytest.param("1.28", {"name": "gpu"}, [(INV, "[0].source", ONE_OF)], id="1.28-no-source"),
    pytest.param(
        "1.28", {"name": "gpu", "source": BOTH}, [(INV, "[0].source", AT_MOST)], id="1.28-both"
    ),
    pytest.param(
        "1.28",
        {"name": "gpu", "source": {"resourceClaimName": "Bad_"}},
        [(INV, "[0].source.resourceClaimName", BAD_NAME)],
        id="1.28-bad-claim-name",
    ),
    pytest.param("1.36", {"name": "gpu"}, [(REQ, "[0]", ONE_OF)], id="1.36-neither"),
    pytest.param("1.36", {"name": "gpu", **BOTH}, [(INV, "[0]", AT_MOST)], id="1.36-both"),
    pytest.param(
        "1.36",
        {"name": "gpu", "resourceClaimTemplateName": "Bad_"},
        [(INV, "[0].resourceClaimTemplateName", BAD_NAME)],
        id="1.36-bad-template-name",
    ),
    pytest.param(
        "1.36",
        {"name": "gpu", "source": {"resourceClaimTemplateName": "t"}},
        [(REQ, "[0]", ONE_OF)],
        id="1.36-source-is-dropped-as-unknown",
    ),
    pytest.param(
        "1.28",
        {"name": "gpu", "resourceClaimTemplateName": "t"},
        [(INV, "[0].source", ONE_OF)],
        id="1.28-flat-fields-are-dropped-as-unknown",
    ),
]


@pytest.mark.parametrize(("mode", "claim", "causes"), INVALID_CASES)
async def test_invalid_pod_claims_get_the_modes_causes(
    clusters: dict[str, Cluster], mode: str, claim: Obj, causes: list[tuple[str, str, str]]
) -> None:
    with pytest.raises(errors.StatusError) as exc:
        await _create(clusters[mode], _pod(claim))

    assert exc.value.code == 422
    found = [c for c in _causes(exc.value) if c[1].startswith("spec.resourceClaims")]
    assert [(r, f) for r, f, _ in found] == [(r, "spec.resourceClaims" + f) for r, f, _ in causes]
    assert all(m in message for (_, _, m), (_, _, message) in zip(causes, found, strict=True))


VALID_CASES = [
    pytest.param(
        "1.28",
        {"name": "gpu", "source": {"resourceClaimTemplateName": "t"}},
        {"name": "gpu", "source": {"resourceClaimTemplateName": "t"}},
        id="1.28-template",
    ),
    pytest.param(
        "1.28",
        {"name": "gpu", "source": {"resourceClaimName": "c"}},
        {"name": "gpu", "source": {"resourceClaimName": "c"}},
        id="1.28-claim",
    ),
    pytest.param(
        "1.36",
        {"name": "gpu", "resourceClaimTemplateName": "t"},
        {"name": "gpu", "resourceClaimTemplateName": "t"},
        id="1.36-template",
    ),
    pytest.param(
        "1.36",
        {"name": "gpu", "resourceClaimName": "c"},
        {"name": "gpu", "resourceClaimName": "c"},
        id="1.36-claim",
    ),
]


@pytest.mark.parametrize(("mode", "claim", "stored"), VALID_CASES)
async def test_valid_pod_claims_are_stored_in_the_modes_shape(
    clusters: dict[str, Cluster], mode: str, claim: Obj, stored: Obj
) -> None:
    created = await _create(clusters[mode], _pod(claim), validation="Strict")

    assert created["spec"]["resourceClaims"] == [stored]


@pytest.mark.parametrize(
    ("mode", "claim", "unknown"),
    [
        pytest.param(
            "1.36", {"name": "g", "source": {"resourceClaimName": "c"}}, "source", id="1.36"
        ),
        pytest.param(
            "1.28", {"name": "g", "resourceClaimName": "c"}, "resourceClaimName", id="1.28"
        ),
    ],
)
async def test_strict_rejects_the_other_modes_shape(
    clusters: dict[str, Cluster], mode: str, claim: Obj, unknown: str
) -> None:
    with pytest.raises(errors.StatusError) as exc:
        await _create(clusters[mode], _pod(claim), validation="Strict")

    assert exc.value.code == 400
    assert exc.value.message == (
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
        f'unknown field "spec.resourceClaims[0].{unknown}"'
    )


async def test_strategic_merge_patch_merges_a_templates_flat_pod_claims_by_name(
    clusters: dict[str, Cluster],
) -> None:
    client = clusters["1.36"].client()
    deployment = make_deployment("smp").claim_template("a", "t", mode=versions.STRUCTURED).obj()
    deployment["metadata"].pop("uid", None)
    await client.create(kinds.DEPLOYMENTS, deployment, "default")
    patch = {
        "spec": {
            "template": {"spec": {"resourceClaims": [{"name": "b", "resourceClaimName": "c"}]}}
        }
    }

    patched = await client.patch(kinds.DEPLOYMENTS, "smp", patch, "default", patch_type="strategic")

    claims = patched["spec"]["template"]["spec"]["resourceClaims"]
    assert sorted(claims, key=lambda c: str(c["name"])) == [
        {"name": "a", "resourceClaimTemplateName": "t"},
        {"name": "b", "resourceClaimName": "c"},
    ]


async def _status(cluster: Cluster, name: str, status: Obj) -> Obj:
    client = cluster.client()
    pod = deep_copy(await client.get(kinds.PODS, name, "default"))  # not the cached object
    pod["status"].update(status)
    return await client.update(kinds.PODS, pod, subresource="status")


MAPPING = {"containerName": "ctr", "resourceName": "example.com/gpu", "requestName": "r-0"}

EXTENDED_CASES = [
    pytest.param({"resourceClaimName": "c", "requestMappings": [MAPPING]}, [], id="valid"),
    pytest.param(
        {"resourceClaimName": "c", "requestMappings": []},
        [(REQ, ".requestMappings")],
        id="no-mappings",
    ),
    pytest.param(
        {"resourceClaimName": "c", "requestMappings": [{**MAPPING, "containerName": "other"}]},
        [(INV, ".requestMappings[0].containerName")],
        id="unknown-container",
    ),
    pytest.param(
        {"resourceClaimName": "c", "requestMappings": [MAPPING, {**MAPPING, "requestName": "r-1"}]},
        [(DUP, ".requestMappings[1]")],
        id="duplicate-container-resource",
    ),
    pytest.param(
        {"resourceClaimName": "C!", "requestMappings": [{**MAPPING, "requestName": "R_0"}]},
        [(INV, ".requestMappings[0].requestName"), (INV, ".resourceClaimName")],
        id="bad-names",
    ),
]


@pytest.mark.parametrize(("status", "causes"), EXTENDED_CASES)
async def test_extended_resource_claim_status_validation(
    clusters: dict[str, Cluster], status: Obj, causes: list[tuple[str, str]]
) -> None:
    cluster = clusters["1.36"]
    pod = _pod()
    pod["spec"].pop("resourceClaims")
    pod["spec"]["containers"][0]["name"] = "ctr"
    created = await _create(cluster, pod)
    name = created["metadata"]["name"]
    try:
        updated = await _status(cluster, name, {"extendedResourceClaimStatus": status})
    except errors.StatusError as err:
        assert err.code == 422
        found = [(r, f) for r, f, _ in _causes(err)]
        assert found == [(r, "status.extendedResourceClaimStatus" + f) for r, f in causes]
        return
    assert causes == []
    assert updated["status"]["extendedResourceClaimStatus"] == status
    with pytest.raises(errors.StatusError) as exc:
        await _status(
            cluster, name, {"extendedResourceClaimStatus": {**status, "resourceClaimName": "d"}}
        )
    assert _causes(exc.value)[0][:2] == (INV, "status.extendedResourceClaimStatus")


async def test_extended_resource_claim_status_is_unknown_in_1_28(
    clusters: dict[str, Cluster],
) -> None:
    cluster = clusters["1.28"]
    created = await _create(cluster, _pod({"name": "g", "source": {"resourceClaimName": "c"}}))
    status = {"resourceClaimName": "c", "requestMappings": [MAPPING]}

    updated = await _status(
        cluster, created["metadata"]["name"], {"extendedResourceClaimStatus": status}
    )

    assert "extendedResourceClaimStatus" not in updated["status"]


def _schemas(mode: versions.Mode) -> dict[str, Any]:
    body = openapi.v3_document("", "v1", Catalog(mode))
    assert body is not None
    schemas: dict[str, Any] = orjson.loads(body)["components"]["schemas"]
    return schemas


@pytest.mark.parametrize(
    ("mode", "claim_fields", "claim_source", "extended"),
    [
        pytest.param(versions.CLASSIC, ["name", "source"], True, False, id="1.28"),
        pytest.param(
            versions.STRUCTURED,
            ["name", "resourceClaimName", "resourceClaimTemplateName"],
            False,
            True,
            id="1.36",
        ),
    ],
)
async def test_openapi_serves_the_modes_pod_claim(
    mode: versions.Mode, claim_fields: list[str], claim_source: bool, extended: bool
) -> None:
    schemas = _schemas(mode)
    core = "io.k8s.api.core.v1."

    assert list(schemas[core + "PodResourceClaim"]["properties"]) == claim_fields
    assert (core + "ClaimSource" in schemas) is claim_source
    status = schemas[core + "PodStatus"]["properties"]
    assert ("extendedResourceClaimStatus" in status) is extended
    assert (core + "PodExtendedResourceClaimStatus" in schemas) is extended


async def test_a_node_may_not_write_the_extended_resource_claim_status(
    clusters: dict[str, Cluster],
) -> None:
    cluster = clusters["1.36"]
    pod = _pod()
    pod["spec"].pop("resourceClaims")
    pod["spec"]["nodeName"] = "node-0"
    pod["spec"]["containers"][0]["name"] = "ctr"
    created = await _create(cluster, pod)
    node = cluster.client(node_user("node-0"))
    changed = deep_copy(created)
    changed["status"]["extendedResourceClaimStatus"] = {
        "resourceClaimName": "c",
        "requestMappings": [MAPPING],
    }

    with pytest.raises(errors.StatusError) as exc:
        await node.update(kinds.PODS, changed, subresource="status")

    assert exc.value.code == 403
    assert 'node "node-0" cannot update extended resource claim status' in exc.value.message


@pytest.mark.parametrize("mode", [versions.CLASSIC, versions.STRUCTURED], ids=str)
async def test_pod_logs_find_a_containers_claims_in_either_shape(mode: versions.Mode) -> None:
    pod = (
        make_pod("p")
        .claim_ref("a", "claim-a", mode=mode)
        .claim_template("b", "t", mode=mode)
        .claim_status("b", "p-b-x")
        .obj()
    )

    assert containerlogs.claim_names(pod, pod["spec"]["containers"][0]["name"]) == [
        "claim-a",
        "p-b-x",
    ]
