"""Service-account tokens: the signing key in the data dir, the JWT an issuer signs, and what
the authenticator makes of it (the user, a decline, or kube-apiserver's reason for a 401).

Objects live in the real storage behind the registry: pods and nodes go through the registry,
ServiceAccounts and Secrets (not served kinds yet) straight into the storage.
"""

from __future__ import annotations

import base64
import hashlib
import json
import stat
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization

from draplane.api import kinds
from draplane.api.auth import UserInfo
from draplane.api.meta import Obj
from draplane.apiserver.authentication import sakeys
from draplane.apiserver.authentication.satokens import (
    DEFAULT_ISSUER,
    AuthenticationError,
    BoundObject,
    ServiceAccountAuthenticator,
    TokenIssuer,
)
from draplane.clock import format_time, parse_time
from draplane.testing.builders import make_node, make_pod
from draplane.testing.clock import FakeClock
from draplane.testing.cluster import Cluster

ES256 = sakeys.generate("ES256")
RS256 = sakeys.generate("RS256")
OTHER = sakeys.generate("ES256")
SA_UID = "sa-uid-1"
SA_GROUPS = ("system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated")
NOW = datetime.fromisoformat("2026-01-01T00:00:00+00:00")
POD = BoundObject("Pod", "web", "pod-uid", "node-0", "node-uid")
YEAR = 365 * 24 * 3600


@pytest.fixture
def cluster_options() -> dict[str, Any]:
    return {"clock": FakeClock()}


@pytest.fixture
async def cluster(cluster: Cluster) -> Cluster:
    """The cluster with the service accounts, a secret, a node and pods the tests name."""
    c = cluster
    await c.storage.create("serviceaccounts", service_account("builder", SA_UID))
    await c.storage.create("secrets", named("s1", "secret-uid-1"))
    await c.client().create(kinds.NODES, make_node("node-0").obj())
    pod = make_pod("web").node("node-0").set("spec.serviceAccountName", "builder")
    await c.client().create(kinds.PODS, pod.finalizer("example.com/hold").obj(), "default")
    return c


def named(name: str, uid: str, namespace: str = "default") -> Obj:
    return {"metadata": {"name": name, "namespace": namespace, "uid": uid}}


def service_account(name: str, uid: str, namespace: str = "default") -> Obj:
    return {"apiVersion": "v1", "kind": "ServiceAccount", **named(name, uid, namespace)}


def now_of(cluster: Cluster) -> datetime:
    return cluster.clock.now()


async def uid_of(cluster: Cluster, resource: str, name: str, namespace: str = "default") -> str:
    obj = await cluster.storage.get(resource, namespace, name)
    assert obj is not None
    return str(obj["metadata"]["uid"])


def decode(token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    def part(s: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(base64.urlsafe_b64decode(s + "=" * (-len(s) % 4)))
        return data

    header, payload, _ = token.split(".")
    return part(header), part(payload)


def authenticator(key: sakeys.SigningKey = ES256) -> ServiceAccountAuthenticator:
    return ServiceAccountAuthenticator.for_issuer(TokenIssuer(key))


def claims_at(t: datetime, **changes: Any) -> dict[str, Any]:
    """The claims of an unbound token for default/builder issued at t; None drops a claim."""
    iat = int(t.timestamp())
    claims: dict[str, Any] = {
        "aud": [DEFAULT_ISSUER],
        "exp": iat + 3600,
        "iat": iat,
        "iss": DEFAULT_ISSUER,
        "jti": "11111111-2222-3333-4444-555555555555",
        "kubernetes.io": {
            "namespace": "default",
            "serviceaccount": {"name": "builder", "uid": SA_UID},
        },
        "nbf": iat,
        "sub": "system:serviceaccount:default:builder",
    }
    claims.update(changes)
    return {k: v for k, v in claims.items() if v is not None}


# --- the signing key in the data dir -------------------------------------------------------


@pytest.mark.parametrize("algorithm", ["ES256", "RS256"])
async def test_key_is_created_once_and_loaded_by_later_starts(
    cluster: Cluster, tmp_path: Path, algorithm: str
) -> None:
    first = sakeys.load_or_create(tmp_path, algorithm)
    second = sakeys.load_or_create(tmp_path, algorithm)
    path = sakeys.key_file(tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert (first.kid, first.algorithm) == (second.kid, second.algorithm)
    assert first.algorithm == algorithm
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sa.key", "sa.key.lock"]
    # A token one API server signs, another one sharing the data dir accepts.
    now = now_of(cluster)
    token, _ = TokenIssuer(first).issue("default", "builder", SA_UID, [], 3600, None, now)
    user = await authenticator(second).authenticate(token, cluster.storage.get, now)
    assert user is not None and user.name == "system:serviceaccount:default:builder"


def test_generated_key_is_rs256_by_default(tmp_path: Path) -> None:
    key = sakeys.load_or_create(tmp_path)
    assert key.algorithm == "RS256"
    assert sakeys.load(sakeys.key_file(tmp_path)).private_key.key_size == 2048  # type: ignore[union-attr]


def test_existing_key_wins_over_the_requested_algorithm(tmp_path: Path) -> None:
    created = sakeys.load_or_create(tmp_path, "RS256")
    assert sakeys.load_or_create(tmp_path, "ES256").kid == created.kid


def test_kid_is_the_base64url_sha256_of_the_der_public_key(tmp_path: Path) -> None:
    key = sakeys.load_or_create(tmp_path)
    der = key.private_key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    digest = base64.urlsafe_b64encode(hashlib.sha256(der).digest()).decode().rstrip("=")
    assert key.kid == digest
    assert len(key.kid) == 43


def test_concurrent_first_starts_agree_on_one_key(tmp_path: Path) -> None:
    with ThreadPoolExecutor(4) as pool:
        kids = set(pool.map(lambda _: sakeys.load_or_create(tmp_path, "ES256").kid, range(8)))
    assert kids == {sakeys.load(sakeys.key_file(tmp_path)).kid}


def test_stale_temporary_file_does_not_widen_the_mode(tmp_path: Path) -> None:
    stale = sakeys.key_file(tmp_path).with_suffix(".tmp")
    stale.write_text("partial")
    stale.chmod(0o644)
    sakeys.load_or_create(tmp_path)
    assert stat.S_IMODE(sakeys.key_file(tmp_path).stat().st_mode) == 0o600
    assert not stale.exists()


@pytest.mark.parametrize(
    ("content", "match"),
    [
        pytest.param(b"not a key", "not an unencrypted PEM private key", id="garbage"),
        pytest.param(b"", "not an unencrypted PEM private key", id="empty"),
    ],
)
def test_unusable_key_file_is_an_error(tmp_path: Path, content: bytes, match: str) -> None:
    sakeys.key_file(tmp_path).write_bytes(content)
    with pytest.raises(ValueError, match=match):
        sakeys.load_or_create(tmp_path)


def test_unsupported_algorithm_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unsupported algorithm 'HS256'"):
        sakeys.load_or_create(tmp_path, "HS256")
    assert not sakeys.key_file(tmp_path).exists()


# --- the JWT an issuer signs ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("bound", "private"),
    [
        pytest.param(None, {}, id="unbound"),
        pytest.param(
            POD,
            {
                "pod": {"name": "web", "uid": "pod-uid"},
                "node": {"name": "node-0", "uid": "node-uid"},
            },
            id="pod-on-node",
        ),
        pytest.param(
            BoundObject("Pod", "web", "pod-uid", "node-0"),
            {"pod": {"name": "web", "uid": "pod-uid"}, "node": {"name": "node-0"}},
            id="pod-on-missing-node",
        ),
        pytest.param(
            BoundObject("Pod", "web", "pod-uid"),
            {"pod": {"name": "web", "uid": "pod-uid"}},
            id="pod",
        ),
        pytest.param(
            BoundObject("Secret", "s1", "s-uid"),
            {"secret": {"name": "s1", "uid": "s-uid"}},
            id="secret",
        ),
        pytest.param(
            BoundObject("Node", "node-0", "n-uid"),
            {"node": {"name": "node-0", "uid": "n-uid"}},
            id="node",
        ),
    ],
)
@pytest.mark.parametrize("key", [ES256, RS256], ids=["ES256", "RS256"])
def test_token_claims(
    key: sakeys.SigningKey, bound: BoundObject | None, private: dict[str, Any]
) -> None:
    token, expires = TokenIssuer(key).issue(
        "default", "builder", SA_UID, ["api", "vault"], 3600, bound, NOW + timedelta(seconds=0.7)
    )
    header, claims = decode(token)
    assert header == {"alg": key.algorithm, "kid": key.kid}
    iat = int(NOW.timestamp())
    assert uuid.UUID(claims.pop("jti")).version == 4
    assert claims == {
        "aud": ["api", "vault"],
        "exp": iat + 3600,
        "iat": iat,
        "iss": DEFAULT_ISSUER,
        "kubernetes.io": {
            "namespace": "default",
            "serviceaccount": {"name": "builder", "uid": SA_UID},
            **private,
        },
        "nbf": iat,
        "sub": "system:serviceaccount:default:builder",
    }
    assert format_time(expires) == "2026-01-01T01:00:00Z"


def test_every_token_has_its_own_jti() -> None:
    issuer = TokenIssuer(ES256)
    jtis = {
        decode(issuer.issue("default", "b", "u", ["a"], 3600, None, NOW)[0])[1]["jti"]
        for _ in range(3)
    }
    assert len(jtis) == 3


@pytest.mark.parametrize(
    ("bound", "seconds", "audiences", "extend", "extended"),
    [
        pytest.param(POD, 3607, [DEFAULT_ISSUER], True, True, id="projected-volume-token"),
        pytest.param(POD, 3607, [], True, True, id="no-audiences-is-a-subset"),
        pytest.param(POD, 3607, ["vault"], True, False, id="other-audience"),
        pytest.param(POD, 3607, [DEFAULT_ISSUER, "vault"], True, False, id="api-and-other"),
        pytest.param(POD, 3608, [DEFAULT_ISSUER], True, False, id="other-duration"),
        pytest.param(
            BoundObject("Secret", "s", "u"), 3607, [DEFAULT_ISSUER], True, False, id="secret"
        ),
        pytest.param(None, 3607, [DEFAULT_ISSUER], True, False, id="unbound"),
        pytest.param(POD, 3607, [DEFAULT_ISSUER], False, False, id="extension-off"),
    ],
)
def test_projected_volume_tokens_live_a_year_with_warnafter(
    bound: BoundObject | None, seconds: int, audiences: list[str], extend: bool, extended: bool
) -> None:
    issuer = TokenIssuer(ES256, extend_expiration=extend)
    token, expires = issuer.issue("default", "builder", SA_UID, audiences, seconds, bound, NOW)
    _, claims = decode(token)
    iat = int(NOW.timestamp())
    assert expires == NOW + timedelta(seconds=seconds)
    if extended:
        assert (claims["exp"], claims["kubernetes.io"]["warnafter"]) == (iat + YEAR, iat + 3607)
    else:
        assert claims["exp"] == iat + seconds
        assert "warnafter" not in claims["kubernetes.io"]


def test_binding_to_another_kind_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="can only be bound to a Pod, Secret or Node: ConfigMap"):
        TokenIssuer(ES256).issue(
            "default", "b", "u", [], 3600, BoundObject("ConfigMap", "c", "u"), NOW
        )


@pytest.mark.parametrize("seconds", [1, 3599, (1 << 32) + 1])
def test_max_expiration_out_of_range_is_rejected(seconds: int) -> None:
    with pytest.raises(ValueError, match="must be between 1 hour and 2\\^32 seconds"):
        TokenIssuer(ES256, max_expiration_seconds=seconds)


def test_api_audiences_default_to_the_issuer() -> None:
    assert TokenIssuer(ES256).api_audiences == (DEFAULT_ISSUER,)
    assert TokenIssuer(ES256, "https://issuer.example").api_audiences == ("https://issuer.example",)
    assert TokenIssuer(ES256, api_audiences=["a", "b"]).api_audiences == ("a", "b")


# --- the authenticator: valid tokens ------------------------------------------------------


def user(*extra: tuple[str, str], uid: str = SA_UID) -> UserInfo:
    return UserInfo(
        "system:serviceaccount:default:builder",
        uid,
        SA_GROUPS,
        tuple(sorted((k, (v,)) for k, v in extra)),
    )


async def bound_to(cluster: Cluster, kind: str) -> BoundObject | None:
    if kind == "Pod":
        return BoundObject(
            "Pod",
            "web",
            await uid_of(cluster, "pods", "web"),
            "node-0",
            await uid_of(cluster, "nodes", "node-0", ""),
        )
    if kind == "Secret":
        return BoundObject("Secret", "s1", "secret-uid-1")
    if kind == "Node":
        return BoundObject("Node", "node-0", await uid_of(cluster, "nodes", "node-0", ""))
    return None


@pytest.mark.parametrize(
    ("kind", "extra_keys"),
    [
        pytest.param("", (), id="unbound"),
        pytest.param("Pod", ("pod-name", "pod-uid", "node-name", "node-uid"), id="pod"),
        pytest.param("Secret", (), id="secret"),
        pytest.param("Node", ("node-name", "node-uid"), id="node"),
    ],
)
@pytest.mark.parametrize("key", [ES256, RS256], ids=["ES256", "RS256"])
async def test_valid_token_authenticates_as_the_service_account(
    cluster: Cluster, key: sakeys.SigningKey, kind: str, extra_keys: tuple[str, ...]
) -> None:
    now = now_of(cluster)
    bound = await bound_to(cluster, kind)
    token, _ = TokenIssuer(key).issue("default", "builder", SA_UID, [], 3600, bound, now)
    got = await authenticator(key).authenticate(token, cluster.storage.get, now)
    node_uid = await uid_of(cluster, "nodes", "node-0", "")
    pod_uid = await uid_of(cluster, "pods", "web")
    values = {"pod-name": "web", "pod-uid": pod_uid, "node-name": "node-0", "node-uid": node_uid}
    jti = decode(token)[1]["jti"]
    expected = user(
        ("authentication.kubernetes.io/credential-id", f"JTI={jti}"),
        *((f"authentication.kubernetes.io/{k}", values[k]) for k in extra_keys),
    )
    assert got == expected
    assert got.extra_dict()["authentication.kubernetes.io/credential-id"] == [f"JTI={jti}"]


async def test_pod_bound_token_names_a_node_without_uid_when_the_node_was_missing(
    cluster: Cluster,
) -> None:
    now = now_of(cluster)
    bound = BoundObject("Pod", "web", await uid_of(cluster, "pods", "web"), "gone-node")
    token, _ = TokenIssuer(ES256).issue("default", "builder", SA_UID, [], 3600, bound, now)
    got = await authenticator().authenticate(token, cluster.storage.get, now)
    assert got is not None
    assert got.extra_dict()["authentication.kubernetes.io/node-name"] == ["gone-node"]
    assert "authentication.kubernetes.io/node-uid" not in got.extra_dict()


async def test_token_without_jti_or_audiences_is_accepted_for_the_api(cluster: Cluster) -> None:
    now = now_of(cluster)
    token = TokenIssuer(ES256).sign(claims_at(now, aud=None, jti=None))
    assert await authenticator().authenticate(token, cluster.storage.get, now) == user()


async def test_requested_audiences_replace_the_api_audiences(cluster: Cluster) -> None:
    now = now_of(cluster)
    token = TokenIssuer(ES256).sign(claims_at(now, aud=["vault", "db"], jti=None))
    authn = authenticator()
    assert await authn.authenticate(token, cluster.storage.get, now, ["db"]) == user()
    with pytest.raises(AuthenticationError) as err:
        await authn.authenticate(token, cluster.storage.get, now)
    assert str(err.value) == (
        'token audiences ["vault" "db"] is invalid for the target audiences '
        '["https://kubernetes.default.svc.cluster.local"]'
    )


# --- the authenticator: tokens it declines --------------------------------------------------


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _jws(payload: bytes) -> str:
    return f"{b64(b'{}')}.{b64(payload)}.{b64(b'signature')}"


def _ours() -> str:
    return TokenIssuer(ES256).sign(claims_at(NOW))


@pytest.mark.parametrize(
    "token",
    [
        pytest.param("", id="empty"),
        pytest.param("static-token-abc", id="opaque"),
        pytest.param('{"iss": "https://kubernetes.default.svc.cluster.local"}', id="json"),
        pytest.param("a.b", id="two-parts"),
        pytest.param("a.b.c.d", id="four-parts"),
        pytest.param(_jws(b'{"iss": 1}'), id="issuer-not-a-string"),
        pytest.param(_jws(b"[1]"), id="payload-not-an-object"),
        pytest.param(_jws(b"not json"), id="payload-not-json"),
        pytest.param("eyJ9.a+b/.eyJ9", id="payload-not-base64url"),
        pytest.param(_jws(b'{"iss": "x"}') + "=", id="signature-padded"),
        pytest.param("!!." + _ours().split(".", 1)[1], id="header-not-base64url"),
        pytest.param(b64(b"not json") + "." + _ours().split(".", 1)[1], id="header-not-json"),
        pytest.param(
            TokenIssuer(ES256).sign(claims_at(NOW, iss="https://other.example")), id="other-issuer"
        ),
        pytest.param(_ours().rsplit(".", 1)[0] + ".!!", id="signature-not-base64url"),
        pytest.param(
            TokenIssuer(ES256).sign(claims_at(NOW, iss="kubernetes/serviceaccount")),
            id="legacy-secret-token",
        ),
    ],
)
async def test_tokens_that_are_not_ours_are_declined(cluster: Cluster, token: str) -> None:
    assert await authenticator().authenticate(token, cluster.storage.get, NOW) is None


# --- the authenticator: invalid tokens and their reasons ------------------------------------


def _with_kid(key: sakeys.SigningKey, kid: str) -> sakeys.SigningKey:
    return sakeys.SigningKey(kid, key.algorithm, key.private_key)


def _resigned(header: dict[str, str] | None = None, signature: str | None = None) -> str:
    """Our token with its header or signature part replaced."""
    h, p, sig = _ours().split(".")
    if header is not None:
        h = b64(json.dumps(header).encode())
    return f"{h}.{p}.{sig if signature is None else signature}"


def _tampered() -> str:
    header, _, signature = _ours().split(".")
    forged = b64(json.dumps(claims_at(NOW, sub="system:serviceaccount:default:admin")).encode())
    return f"{header}.{forged}.{signature}"


@pytest.mark.parametrize(
    ("make_token", "message"),
    [
        pytest.param(
            lambda: TokenIssuer(_with_kid(OTHER, ES256.kid)).sign(claims_at(NOW)),
            "go-jose/go-jose: error in cryptographic primitive",
            id="other-key-same-kid",
        ),
        pytest.param(
            lambda: TokenIssuer(OTHER).sign(claims_at(NOW)),
            "invalid signature, no keys found",
            id="unknown-kid",
        ),
        pytest.param(
            lambda: TokenIssuer(_with_kid(OTHER, "")).sign(claims_at(NOW)),
            "go-jose/go-jose: error in cryptographic primitive",
            id="no-kid-other-key",
        ),
        pytest.param(
            lambda: TokenIssuer(_with_kid(RS256, ES256.kid)).sign(claims_at(NOW)),
            "go-jose/go-jose: error in cryptographic primitive",
            id="wrong-algorithm",
        ),
        pytest.param(_tampered, "go-jose/go-jose: error in cryptographic primitive", id="tampered"),
        pytest.param(
            lambda: _resigned(header={"alg": "none", "kid": ES256.kid}, signature=""),
            "go-jose/go-jose: error in cryptographic primitive",
            id="alg-none",
        ),
        pytest.param(
            lambda: _resigned(signature=b64(b"short")),
            "go-jose/go-jose: error in cryptographic primitive",
            id="short-signature",
        ),
        pytest.param(
            lambda: TokenIssuer(ES256).sign(claims_at(NOW, aud=["vault"])),
            'token audiences ["vault"] is invalid for the target audiences '
            '["https://kubernetes.default.svc.cluster.local"]',
            id="audience",
        ),
        pytest.param(
            lambda: TokenIssuer(ES256).sign(claims_at(NOW, exp="soon")),
            "go-jose/go-jose/jwt: expected number value to unmarshal into NumericDate",
            id="exp-not-a-number",
        ),
        pytest.param(
            lambda: TokenIssuer(ES256).sign(claims_at(NOW, aud=7)),
            "go-jose/go-jose/jwt: expected string or array value to unmarshal to Audience",
            id="aud-not-a-list",
        ),
        pytest.param(
            lambda: TokenIssuer(ES256).sign(claims_at(NOW, jti=5)),
            "json: cannot unmarshal number into Go struct field Claims.jti of type string",
            id="jti-not-a-string",
        ),
        pytest.param(
            lambda: TokenIssuer(ES256).sign(claims_at(NOW, **{"kubernetes.io": []})),
            "json: cannot unmarshal array into Go struct field privateClaims.kubernetes.io "
            "of type serviceaccount.kubernetes",
            id="private-claims-not-an-object",
        ),
        pytest.param(
            lambda: TokenIssuer(ES256).sign(
                claims_at(NOW, **{"kubernetes.io": {"namespace": True}})
            ),
            "json: cannot unmarshal bool into Go struct field "
            "privateClaims.kubernetes.io.namespace of type string",
            id="namespace-not-a-string",
        ),
        pytest.param(
            lambda: TokenIssuer(ES256).sign(
                claims_at(NOW, **{"kubernetes.io": {"namespace": "default", "pod": "web"}})
            ),
            "json: cannot unmarshal string into Go struct field "
            "privateClaims.kubernetes.io.pod of type serviceaccount.ref",
            id="pod-ref-not-an-object",
        ),
        pytest.param(
            lambda: TokenIssuer(ES256).sign(claims_at(NOW, **{"kubernetes.io": None})),
            'serviceaccounts "" not found',
            id="no-private-claims",
        ),
    ],
)
async def test_invalid_token_reason(
    cluster: Cluster, make_token: Callable[[], str], message: str
) -> None:
    with pytest.raises(AuthenticationError) as err:
        await authenticator().authenticate(make_token(), cluster.storage.get, NOW)
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("changes", "offset", "message"),
    [
        pytest.param({}, 3600 + 60, None, id="expired-within-leeway"),
        pytest.param({}, 3600 + 60.5, "service account token has expired", id="expired"),
        pytest.param({"nbf": 600}, 600 - 60, None, id="not-yet-valid-within-leeway"),
        pytest.param({"nbf": 600}, 600 - 60.5, "service account token is not valid yet", id="nbf"),
        pytest.param({"iat": 600, "nbf": None}, 600 - 60, None, id="future-iat-within-leeway"),
        pytest.param(
            {"iat": 600, "nbf": None},
            600 - 60.5,
            "service account token is issued in the future",
            id="iat-in-the-future",
        ),
        pytest.param(
            {"nbf": 600, "exp": 0}, 100, "service account token is not valid yet", id="nbf-first"
        ),
        pytest.param({"exp": None}, 10 * YEAR, None, id="no-exp"),
    ],
)
async def test_time_claims_with_one_minute_leeway(
    cluster: Cluster, changes: dict[str, Any], offset: float, message: str | None
) -> None:
    """Claims relative to iat = T; `now` is T + offset."""
    t = int(NOW.timestamp())
    claims = claims_at(NOW, jti=None)
    claims.update({k: (t + v if v is not None else None) for k, v in changes.items()})
    token = TokenIssuer(ES256).sign({k: v for k, v in claims.items() if v is not None})
    now = NOW + timedelta(seconds=offset)
    if message is None:
        assert await authenticator().authenticate(token, cluster.storage.get, now) == user()
        return
    with pytest.raises(AuthenticationError) as err:
        await authenticator().authenticate(token, cluster.storage.get, now)
    assert str(err.value) == message


async def _mark_deleted(cluster: Cluster, resource: str, name: str, at: datetime) -> None:
    obj = await cluster.storage.get(resource, "" if resource == "nodes" else "default", name)
    assert obj is not None
    changed = json.loads(json.dumps(obj))
    changed["metadata"]["deletionTimestamp"] = format_time(at)
    await cluster.storage.update(resource, changed)


async def _replace(cluster: Cluster, resource: str, name: str) -> str:
    namespace = "" if resource == "nodes" else "default"
    obj = await cluster.storage.get(resource, namespace, name)
    assert obj is not None
    await cluster.storage.delete(resource, namespace, name)
    recreated = {"metadata": {"name": name, "namespace": namespace, "uid": "recreated-uid"}}
    await cluster.storage.create(resource, recreated)
    return str(obj["metadata"]["uid"])


Change = Callable[[Cluster, datetime], Any]


async def _delete(cluster: Cluster, resource: str, name: str) -> None:
    await cluster.storage.delete(resource, "" if resource == "nodes" else "default", name)


async def _delete_pod_through_the_registry(cluster: Cluster, now: datetime) -> datetime:
    """The pod's finalizer keeps it with a deletionTimestamp; returns that timestamp."""
    deleted = await cluster.client().delete(kinds.PODS, "web", "default")
    return parse_time(deleted["metadata"]["deletionTimestamp"])


@pytest.mark.parametrize(
    ("kind", "resource", "name"),
    [
        pytest.param("", "serviceaccounts", "builder", id="serviceaccount"),
        pytest.param("Pod", "pods", "web", id="pod"),
        pytest.param("Secret", "secrets", "s1", id="secret"),
        pytest.param("Node", "nodes", "node-0", id="node"),
    ],
)
@pytest.mark.parametrize(
    "case", ["missing", "recreated", "deleted-long-ago", "deleted-within-leeway"]
)
async def test_token_is_invalidated_with_its_objects(
    cluster: Cluster, kind: str, resource: str, name: str, case: str
) -> None:
    now = now_of(cluster)
    bound = await bound_to(cluster, kind)
    token, _ = TokenIssuer(ES256).issue("default", "builder", SA_UID, [], 3600, bound, now)
    later = now + timedelta(seconds=600)
    if case == "missing":
        await _delete(cluster, resource, name)
    elif case == "recreated":
        old_uid = await _replace(cluster, resource, name)
    else:
        seconds_ago = 61 if case == "deleted-long-ago" else 60
        await _mark_deleted(cluster, resource, name, later - timedelta(seconds=seconds_ago))

    authn = authenticator()
    if case == "deleted-within-leeway":
        got = await authn.authenticate(token, cluster.storage.get, later)
        assert got is not None and got.uid == SA_UID
        return
    with pytest.raises(AuthenticationError) as err:
        await authn.authenticate(token, cluster.storage.get, later)
    singular = {"serviceaccounts": "service account", "pods": "pod", "secrets": "secret"}
    expected = {
        ("serviceaccounts", "missing"): 'serviceaccounts "builder" not found',
        ("serviceaccounts", "deleted-long-ago"): "service account default/builder has been deleted",
    }.get((resource, case), "service account token has been invalidated")
    if case == "recreated":
        what = singular.get(resource, "node")
        expected = (
            f"service account UID (recreated-uid) does not match claim ({old_uid})"
            if resource == "serviceaccounts"
            else f"{what} UID (recreated-uid) does not match service account {what} ref claim "
            f"({old_uid})"
        )
    assert str(err.value) == expected


async def test_pod_deleted_through_the_registry_invalidates_after_the_leeway(
    cluster: Cluster,
) -> None:
    now = now_of(cluster)
    token, _ = TokenIssuer(ES256).issue(
        "default", "builder", SA_UID, [], 3600, await bound_to(cluster, "Pod"), now
    )
    deleted_at = await _delete_pod_through_the_registry(cluster, now)
    authn = authenticator()
    edge = deleted_at + timedelta(seconds=60)
    assert await authn.authenticate(token, cluster.storage.get, edge) is not None
    with pytest.raises(AuthenticationError, match=r"^service account token has been invalidated$"):
        await authn.authenticate(token, cluster.storage.get, edge + timedelta(seconds=1))


async def test_pod_bound_token_ignores_its_node(cluster: Cluster) -> None:
    """The node of a pod-bound token is only reported, never looked up."""
    now = now_of(cluster)
    token, _ = TokenIssuer(ES256).issue(
        "default", "builder", SA_UID, [], 3600, await bound_to(cluster, "Pod"), now
    )
    await _delete(cluster, "nodes", "node-0")
    got = await authenticator().authenticate(token, cluster.storage.get, now)
    assert got is not None
    assert got.extra_dict()["authentication.kubernetes.io/node-name"] == ["node-0"]


# --- UserInfo ----------------------------------------------------------------------------


def test_user_info_extra_is_optional_and_hashable() -> None:
    plain = UserInfo("alice", "u1", ("g",))
    assert (plain.extra, plain.extra_dict()) == ((), {})
    rich = UserInfo("bob", "u2", ("g",), (("k", ("v1", "v2")),))
    assert rich.extra_dict() == {"k": ["v1", "v2"]}
    assert len({plain, rich, UserInfo("alice", "u1", ("g",))}) == 2
