"""POST .../serviceaccounts/NAME/token: defaulting, validation with upstream's Status errors,
bound objects, the server's maximum expiration, and the token it answers with.

Objects live in the real storage behind the registry: pods and nodes go through the registry,
ServiceAccounts and Secrets (not served kinds yet) straight into the storage.
"""

from __future__ import annotations

import base64
import json
from datetime import timedelta
from typing import Any

import pytest

from draplane.api import kinds
from draplane.api.errors import StatusError
from draplane.api.meta import Obj
from draplane.apiserver.authentication import sakeys
from draplane.apiserver.authentication.satokens import (
    DEFAULT_ISSUER,
    AuthenticationError,
    ServiceAccountAuthenticator,
    TokenIssuer,
)
from draplane.apiserver.authentication.tokenrequest import create_token
from draplane.clock import format_time
from draplane.testing.builders import make_node, make_pod
from draplane.testing.clock import FakeClock
from draplane.testing.cluster import Cluster

KEY = sakeys.generate("ES256")
ISSUER = TokenIssuer(KEY)
SA_UID = "sa-uid-1"
YEAR = 365 * 24 * 3600


@pytest.fixture
def cluster_options() -> dict[str, Any]:
    return {"clock": FakeClock()}


@pytest.fixture
async def cluster(cluster: Cluster) -> Cluster:
    """The cluster with the service accounts, a secret, a node and pods the tests name."""
    c = cluster
    await c.storage.create("serviceaccounts", named("builder", SA_UID))
    await c.storage.create("serviceaccounts", named("other", "sa-uid-2"))
    await c.storage.create("secrets", named("s1", "secret-uid-1"))
    client = c.client()
    await client.create(kinds.NODES, make_node("node-0").obj())
    for name, sa, node in (
        ("web", "builder", "node-0"),
        ("lost", "builder", "gone"),
        ("db", "other", ""),
    ):
        pod = make_pod(name).set("spec.serviceAccountName", sa)
        await client.create(kinds.PODS, (pod.node(node) if node else pod).obj(), "default")
    return c


def named(name: str, uid: str) -> Obj:
    return {"metadata": {"name": name, "namespace": "default", "uid": uid}}


def request(spec: dict[str, Any] | None = None, **metadata: Any) -> Obj:
    body: Obj = {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1"}
    if metadata:
        body["metadata"] = metadata
    if spec is not None:
        body["spec"] = spec
    return body


def payload(token: str) -> dict[str, Any]:
    part = token.split(".")[1]
    data: dict[str, Any] = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    return data


async def uid_of(cluster: Cluster, resource: str, name: str, namespace: str = "default") -> str:
    obj = await cluster.storage.get(resource, namespace, name)
    assert obj is not None
    return str(obj["metadata"]["uid"])


async def create(
    cluster: Cluster,
    body: Any,
    sa_name: str = "builder",
    namespace: str = "default",
    issuer: TokenIssuer = ISSUER,
) -> tuple[Obj, list[str]]:
    return await create_token(
        body, namespace, sa_name, cluster.storage.get, issuer, cluster.clock.now()
    )


async def test_defaults_and_response(cluster: Cluster) -> None:
    now = cluster.clock.now()
    out, warnings = await create(cluster, request())
    token = out["status"].pop("token")
    assert warnings == []
    assert out == {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {
            "name": "builder",
            "namespace": "default",
            "uid": SA_UID,
            "creationTimestamp": format_time(now),
        },
        "spec": {"audiences": [DEFAULT_ISSUER], "expirationSeconds": 3600, "boundObjectRef": None},
        "status": {"expirationTimestamp": format_time(now + timedelta(seconds=3600))},
    }
    claims = payload(token)
    assert (claims["aud"], claims["exp"] - claims["iat"]) == ([DEFAULT_ISSUER], 3600)
    assert claims["kubernetes.io"] == {
        "namespace": "default",
        "serviceaccount": {"name": "builder", "uid": SA_UID},
    }
    authn = ServiceAccountAuthenticator.for_issuer(ISSUER)
    user = await authn.authenticate(token, cluster.storage.get, now)
    assert user is not None
    assert (user.name, user.uid) == ("system:serviceaccount:default:builder", SA_UID)


@pytest.mark.parametrize(
    ("spec", "metadata", "audiences", "seconds"),
    [
        pytest.param({"audiences": ["vault", "db"]}, {}, ["vault", "db"], 3600, id="audiences"),
        pytest.param({"audiences": None}, {}, [DEFAULT_ISSUER], 3600, id="null-audiences"),
        pytest.param({"expirationSeconds": 600}, {}, [DEFAULT_ISSUER], 600, id="ten-minutes"),
        pytest.param({"expirationSeconds": 1 << 32}, {}, [DEFAULT_ISSUER], 1 << 32, id="2^32"),
        pytest.param(
            {},
            {"name": "builder", "namespace": "default", "uid": SA_UID},
            [DEFAULT_ISSUER],
            3600,
            id="matching-metadata",
        ),
    ],
)
async def test_accepted_requests(
    cluster: Cluster,
    spec: dict[str, Any],
    metadata: dict[str, Any],
    audiences: list[str],
    seconds: int,
) -> None:
    out, _ = await create(cluster, request(spec, **metadata))
    assert (out["spec"]["audiences"], out["spec"]["expirationSeconds"]) == (audiences, seconds)
    claims = payload(out["status"]["token"])
    assert (claims["aud"], claims["exp"] - claims["iat"]) == (audiences, seconds)


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        pytest.param([], 400, "the request body must be an object", id="body-not-an-object"),
        pytest.param(
            {"kind": "Pod", "apiVersion": "v1"},
            400,
            "the request body must be a TokenRequest (authentication.k8s.io/v1), got v1, Kind=Pod",
            id="other-kind",
        ),
        pytest.param(
            request({"expirationSeconds": "3600"}),
            422,
            'TokenRequest.authentication.k8s.io "builder" is invalid: spec.expirationSeconds: '
            'Invalid value: "3600": must be an integer',
            id="expiration-a-string",
        ),
        pytest.param(
            request({"expirationSeconds": True}),
            422,
            'TokenRequest.authentication.k8s.io "builder" is invalid: spec.expirationSeconds: '
            "Invalid value: true: must be an integer",
            id="expiration-a-bool",
        ),
        pytest.param(
            request({"audiences": "vault"}),
            422,
            'TokenRequest.authentication.k8s.io "builder" is invalid: spec.audiences: '
            'Invalid value: "vault": must be a list',
            id="audiences-a-string",
        ),
        pytest.param(
            request({"audiences": ["ok", 7]}),
            422,
            'TokenRequest.authentication.k8s.io "builder" is invalid: spec.audiences[1]: '
            "Invalid value: 7: must be a string",
            id="audience-a-number",
        ),
        pytest.param(
            request() | {"spec": ["x"]},
            422,
            'TokenRequest.authentication.k8s.io "builder" is invalid: spec: '
            'Invalid value: ["x"]: must be an object',
            id="spec-a-list",
        ),
        pytest.param(
            request() | {"metadata": "builder"},
            422,
            'TokenRequest.authentication.k8s.io "builder" is invalid: metadata: '
            'Invalid value: "builder": must be an object',
            id="metadata-a-string",
        ),
        pytest.param(
            request(name=5),
            422,
            'TokenRequest.authentication.k8s.io "builder" is invalid: metadata.name: '
            "Invalid value: 5: must be a string",
            id="name-a-number",
        ),
        pytest.param(
            request({"boundObjectRef": "web"}),
            422,
            'TokenRequest.authentication.k8s.io "builder" is invalid: spec.boundObjectRef: '
            'Invalid value: "web": must be an object',
            id="bound-ref-a-string",
        ),
        pytest.param(
            request({"boundObjectRef": {"kind": "Pod", "name": ["web"]}}),
            422,
            'TokenRequest.authentication.k8s.io "builder" is invalid: spec.boundObjectRef.name: '
            'Invalid value: ["web"]: must be a string',
            id="bound-name-a-list",
        ),
        pytest.param(
            request(name="other"),
            422,
            'TokenRequest.authentication.k8s.io "builder" is invalid: metadata.name: '
            'Invalid value: "other": must match the service account name if specified',
            id="name-mismatch",
        ),
        pytest.param(
            request(namespace="kube-system"),
            422,
            'TokenRequest.authentication.k8s.io "builder" is invalid: metadata.namespace: '
            'Invalid value: "kube-system": must match the service account namespace if specified',
            id="namespace-mismatch",
        ),
        pytest.param(
            request(uid="stale-uid"),
            409,
            'Operation cannot be fulfilled on TokenRequest.authentication.k8s.io "builder": the '
            f"UID in the token request (stale-uid) does not match the UID of the service account "
            f"({SA_UID})",
            id="uid-mismatch",
        ),
        pytest.param(
            request({"expirationSeconds": 599}),
            422,
            'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: '
            "Invalid value: 599: may not specify a duration less than 10 minutes",
            id="under-ten-minutes",
        ),
        pytest.param(
            request({"expirationSeconds": 0}),
            422,
            'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: '
            "Invalid value: 0: may not specify a duration less than 10 minutes",
            id="zero",
        ),
        pytest.param(
            request({"expirationSeconds": (1 << 32) + 1}),
            422,
            'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: '
            "Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds",
            id="over-2^32",
        ),
    ],
)
async def test_rejected_requests(cluster: Cluster, body: Any, code: int, message: str) -> None:
    revision = cluster.storage.revision
    with pytest.raises(StatusError) as err:
        await create(cluster, body)
    assert (err.value.code, err.value.message) == (code, message)
    assert cluster.storage.revision == revision


async def test_invalid_status_details(cluster: Cluster) -> None:
    with pytest.raises(StatusError) as err:
        await create(cluster, request({"expirationSeconds": 60}))
    assert err.value.status()["details"] == {
        "group": "authentication.k8s.io",
        "kind": "TokenRequest",
        "causes": [
            {
                "reason": "FieldValueInvalid",
                "message": "Invalid value: 60: may not specify a duration less than 10 minutes",
                "field": "spec.expirationSeconds",
            }
        ],
    }


@pytest.mark.parametrize(
    ("body", "sa_name", "code", "message"),
    [
        pytest.param(request(), "nobody", 404, 'serviceaccounts "nobody" not found', id="no-sa"),
        pytest.param(
            request(name="x"),
            "nobody",
            422,
            'TokenRequest.authentication.k8s.io "nobody" is invalid: metadata.name: '
            'Invalid value: "x": must match the service account name if specified',
            id="metadata-checked-before-the-lookup",
        ),
        pytest.param(
            request({"expirationSeconds": 1}),
            "nobody",
            404,
            'serviceaccounts "nobody" not found',
            id="lookup-before-validation",
        ),
    ],
)
async def test_service_account_lookup_order(
    cluster: Cluster, body: Obj, sa_name: str, code: int, message: str
) -> None:
    with pytest.raises(StatusError) as err:
        await create(cluster, body, sa_name)
    assert (err.value.code, err.value.message) == (code, message)


def bound(kind: str, name: str, api_version: str = "v1", uid: str = "") -> Obj:
    ref = {"kind": kind, "apiVersion": api_version, "name": name}
    return request({"boundObjectRef": ref | ({"uid": uid} if uid else {})})


@pytest.mark.parametrize(
    ("kind", "name", "use_uid", "private"),
    [
        pytest.param("Pod", "web", False, {"pod": "web", "node": "node-0"}, id="pod-on-node"),
        pytest.param("Pod", "web", True, {"pod": "web", "node": "node-0"}, id="pod-with-uid"),
        pytest.param("Pod", "lost", False, {"pod": "lost", "node": "gone"}, id="pod-node-missing"),
        pytest.param("Secret", "s1", True, {"secret": "s1"}, id="secret"),
        pytest.param("Node", "node-0", True, {"node": "node-0"}, id="node"),
    ],
)
async def test_bound_objects(
    cluster: Cluster, kind: str, name: str, use_uid: bool, private: dict[str, str]
) -> None:
    resource = {"Pod": "pods", "Secret": "secrets", "Node": "nodes"}[kind]
    uid = await uid_of(cluster, resource, name, "" if kind == "Node" else "default")
    out, _ = await create(cluster, bound(kind, name, uid=uid if use_uid else ""))
    assert out["spec"]["boundObjectRef"]["name"] == name
    refs = payload(out["status"]["token"])["kubernetes.io"]
    expected_uids = {
        "pod": uid,
        "secret": uid,
        "node": uid if kind == "Node" else (await uid_of(cluster, "nodes", "node-0", "")),
    }
    assert {k: refs[k]["name"] for k in private} == private
    for k in private:
        if private[k] == "gone":
            assert "uid" not in refs[k]
        else:
            assert refs[k]["uid"] == expected_uids[k]


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        pytest.param(bound("Pod", "nope"), 404, 'pods "nope" not found', id="pod-missing"),
        pytest.param(bound("Node", "nope"), 404, 'nodes "nope" not found', id="node-missing"),
        pytest.param(bound("Secret", "nope"), 404, 'secrets "nope" not found', id="secret-missing"),
        pytest.param(bound("Pod", ""), 400, "Name parameter required.", id="no-name"),
        pytest.param(
            bound("Pod", "db"),
            400,
            'cannot bind token for serviceaccount "builder" to pod running with different '
            "serviceaccount name.",
            id="pod-of-another-sa",
        ),
        pytest.param(
            bound("Pod", "web", uid="stale"),
            409,
            'Operation cannot be fulfilled on Pod "web": the UID in the bound object reference '
            "(stale) does not match the UID in record. The object might have been deleted and "
            "then recreated",
            id="pod-uid",
        ),
        pytest.param(
            bound("Node", "node-0", uid="stale"),
            409,
            'Operation cannot be fulfilled on Node "node-0": the UID in the bound object '
            "reference (stale) does not match the UID in record. The object might have been "
            "deleted and then recreated",
            id="node-uid",
        ),
        pytest.param(
            bound("Secret", "s1", uid="stale"),
            409,
            'Operation cannot be fulfilled on Secret "s1": the UID in the bound object reference '
            "(stale) does not match the UID in record. The object might have been deleted and "
            "then recreated",
            id="secret-uid",
        ),
        pytest.param(
            bound("ConfigMap", "cm"),
            400,
            "cannot bind token to object of type /v1, Kind=ConfigMap",
            id="configmap",
        ),
        pytest.param(
            bound("Pod", "web", "apps/v1"),
            400,
            "cannot bind token to object of type apps/v1, Kind=Pod",
            id="pod-in-another-group",
        ),
        pytest.param(
            request({"boundObjectRef": {}}),
            400,
            "cannot bind token to object of type /, Kind=",
            id="empty-ref",
        ),
    ],
)
async def test_rejected_bound_objects(cluster: Cluster, body: Obj, code: int, message: str) -> None:
    with pytest.raises(StatusError) as err:
        await create(cluster, body)
    assert (err.value.code, err.value.message) == (code, message)


async def test_unparsable_api_version_still_binds_a_core_pod(cluster: Cluster) -> None:
    """schema.FromAPIVersionAndKind drops a group/version it cannot parse."""
    out, _ = await create(cluster, bound("Pod", "web", "a/b/c"))
    assert payload(out["status"]["token"])["kubernetes.io"]["pod"]["name"] == "web"


@pytest.mark.parametrize(
    ("requested", "maximum", "granted", "warnings"),
    [
        pytest.param(
            86400,
            7200,
            7200,
            ["requested expiration of 86400 seconds shortened to 7200 seconds"],
            id="shortened",
        ),
        pytest.param(7200, 7200, 7200, [], id="at-the-maximum"),
        pytest.param(86400, 0, 86400, [], id="no-maximum"),
    ],
)
async def test_server_maximum_expiration(
    cluster: Cluster, requested: int, maximum: int, granted: int, warnings: list[str]
) -> None:
    issuer = TokenIssuer(KEY, max_expiration_seconds=maximum)
    now = cluster.clock.now()
    out, got = await create(cluster, request({"expirationSeconds": requested}), issuer=issuer)
    assert got == warnings
    assert out["spec"]["expirationSeconds"] == granted
    assert out["status"]["expirationTimestamp"] == format_time(now + timedelta(seconds=granted))
    claims = payload(out["status"]["token"])
    assert claims["exp"] - claims["iat"] == granted


async def test_projected_volume_request_gets_a_year_and_reports_an_hour(cluster: Cluster) -> None:
    now = cluster.clock.now()
    body = bound("Pod", "web")
    body["spec"]["expirationSeconds"] = 3607
    out, _ = await create(cluster, body)
    claims = payload(out["status"]["token"])
    assert claims["exp"] - claims["iat"] == YEAR
    assert claims["kubernetes.io"]["warnafter"] - claims["iat"] == 3607
    assert out["status"]["expirationTimestamp"] == format_time(now + timedelta(seconds=3607))


async def test_pod_bound_token_is_invalidated_when_the_pod_goes(cluster: Cluster) -> None:
    now = cluster.clock.now()
    out, _ = await create(cluster, bound("Pod", "web"))
    token = out["status"]["token"]
    authn = ServiceAccountAuthenticator.for_issuer(ISSUER)
    user = await authn.authenticate(token, cluster.storage.get, now)
    assert user is not None
    assert user.extra_dict()["authentication.kubernetes.io/pod-name"] == ["web"]
    await cluster.client().delete(kinds.PODS, "web", "default", grace_period_seconds=0)
    assert await cluster.storage.get("pods", "default", "web") is None
    with pytest.raises(AuthenticationError) as err:
        await authn.authenticate(token, cluster.storage.get, now)
    assert str(err.value) == "service account token has been invalidated"
