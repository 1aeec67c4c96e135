"""Service-account JWTs: `TokenIssuer` signs them, `ServiceAccountAuthenticator` validates them.

The claims, the checks and their order follow kube-apiserver 1.34 (pkg/serviceaccount/claims.go
and jwt.go): a token from another issuer, or no JWT at all, is declined (None) so the next
authenticator may try; a token of ours that fails a check raises `AuthenticationError` with
kube-apiserver's message (a 401 for the client). Validation reads the service account and any
bound pod, secret or node through `lookup(resource, namespace, name)`, which returns the stored
object or None.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

import orjson
from cryptography.hazmat.primitives.asymmetric import rsa
from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, RSAKey

from draplane.api import auth, meta
from draplane.api.auth import UserInfo
from draplane.api.meta import Obj
from draplane.apiserver.authentication.saclaims import (
    AuthenticationError as AuthenticationError,  # re-exported: what authenticate() raises
    Claims,
    parse_claims,
)
from draplane.apiserver.authentication.sakeys import (
    PrivateKey,
    PublicKey,
    SigningKey,
    VerificationKey,
)
from draplane.clock import parse_time

DEFAULT_ISSUER = "https://kubernetes.default.svc.cluster.local"
LEEWAY_SECONDS = 60
"""go-jose's jwt.DefaultLeeway, for exp, nbf, iat and deletion timestamps."""
WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS = 60 * 60 + 7
"""What projected service-account token volumes ask for; see `TokenIssuer.issue`."""
EXPIRATION_EXTENSION_SECONDS = 24 * 365 * 60 * 60

POD_NAME_KEY = "authentication.kubernetes.io/pod-name"
POD_UID_KEY = "authentication.kubernetes.io/pod-uid"
NODE_NAME_KEY = auth.NODE_NAME_KEY
NODE_UID_KEY = "authentication.kubernetes.io/node-uid"
CREDENTIAL_ID_KEY = "authentication.kubernetes.io/credential-id"

ERR_INVALIDATED = "service account token has been invalidated"
ERR_SIGNATURE = "go-jose/go-jose: error in cryptographic primitive"

Lookup = Callable[[str, str, str], Awaitable[Obj | None]]
"""`(resource, namespace, name) -> stored object or None`; resource is `serviceaccounts`,
`pods`, `secrets` or `nodes` (namespace "" for nodes)."""

_B64URL = re.compile(r"[A-Za-z0-9_-]*")


def _jose_key(key: PrivateKey | PublicKey) -> ECKey | RSAKey:
    if isinstance(key, rsa.RSAPrivateKey | rsa.RSAPublicKey):
        return RSAKey.import_key(key)
    return ECKey.import_key(key)


@dataclass(frozen=True)
class BoundObject:
    """What a token is bound to: a Pod (with the node it runs on, if known), a Secret or a
    Node. The token is invalidated once that object is gone or replaced."""

    kind: str
    name: str
    uid: str
    node_name: str = ""
    node_uid: str = ""


def service_account_user(
    namespace: str,
    name: str,
    uid: str,
    *,
    pod: tuple[str, str] = ("", ""),
    node: tuple[str, str] = ("", ""),
    jti: str = "",
) -> UserInfo:
    """The user a service account authenticates as (ServiceAccountInfo.UserInfo), with the
    group every authenticated user gets."""
    extra: dict[str, tuple[str, ...]] = {}
    if pod[0] and pod[1]:
        extra[POD_NAME_KEY], extra[POD_UID_KEY] = (pod[0],), (pod[1],)
    if jti:
        extra[CREDENTIAL_ID_KEY] = (f"JTI={jti}",)
    if node[0]:
        extra[NODE_NAME_KEY] = (node[0],)
        if node[1]:
            extra[NODE_UID_KEY] = (node[1],)
    account = auth.service_account_user(namespace, name, uid)
    return replace(account, extra=tuple(sorted(extra.items())))


def _ref(name: str, uid: str) -> dict[str, str]:
    return {k: v for k, v in (("name", name), ("uid", uid)) if v}


class TokenIssuer:
    """Signs service-account tokens with the data dir's key for one issuer.

    `api_audiences` (default: the issuer) are the audiences the API server accepts and what a
    TokenRequest without audiences gets; `max_expiration_seconds` (0: none) caps requested
    expirations (`--service-account-max-token-expiration`); `extend_expiration` is
    `--service-account-extend-token-expiration` (default true).
    """

    def __init__(
        self,
        key: SigningKey,
        issuer: str = DEFAULT_ISSUER,
        api_audiences: Sequence[str] | None = None,
        *,
        max_expiration_seconds: int = 0,
        extend_expiration: bool = True,
    ) -> None:
        if max_expiration_seconds and not 3600 <= max_expiration_seconds <= 1 << 32:
            raise ValueError(
                "the service-account-max-token-expiration must be between 1 hour and 2^32 seconds"
            )
        self.key = key
        self.issuer = issuer
        self.api_audiences: tuple[str, ...] = tuple(api_audiences or (issuer,))
        self.max_expiration_seconds = max_expiration_seconds
        self.extend_expiration = extend_expiration
        self._jose_key = _jose_key(key.private_key)
        self._registry = jws.JWSRegistry(algorithms=[key.algorithm])

    def sign(self, claims: Mapping[str, Any]) -> str:
        """The compact JWS of `claims`, keys sorted, header `{"alg", "kid"}` as upstream's."""
        payload = orjson.dumps(claims, option=orjson.OPT_SORT_KEYS)
        header = {"alg": self.key.algorithm, "kid": self.key.kid}
        return jws.serialize_compact(header, payload, self._jose_key, registry=self._registry)

    def issue(
        self,
        namespace: str,
        sa_name: str,
        sa_uid: str,
        audiences: Sequence[str],
        expiration_seconds: int,
        bound: BoundObject | None,
        now: datetime,
    ) -> tuple[str, datetime]:
        """A signed token and the expiration a TokenRequest reports (now + expiration_seconds).

        An upstream quirk, kept: a pod-bound token asking exactly 3607 s for API audiences
        only (what projected volumes ask for) really expires after a year, with a `warnafter`
        claim at +3607 s, while the reported expiration stays at +3607 s.
        """
        if bound is not None and bound.kind not in ("Pod", "Secret", "Node"):
            raise ValueError(f"a token can only be bound to a Pod, Secret or Node: {bound.kind}")
        lifetime, warn_after = expiration_seconds, 0
        if (
            self.extend_expiration
            and bound is not None
            and bound.kind == "Pod"
            and expiration_seconds == WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS
            and set(audiences) <= set(self.api_audiences)
        ):
            lifetime, warn_after = EXPIRATION_EXTENSION_SECONDS, expiration_seconds
        iat = int(now.timestamp())
        private: dict[str, Any] = {
            "namespace": namespace,
            "serviceaccount": _ref(sa_name, sa_uid),
        }
        if bound is not None:
            private[bound.kind.lower()] = _ref(bound.name, bound.uid)
            if bound.kind == "Pod" and bound.node_name:
                private["node"] = _ref(bound.node_name, bound.node_uid)
        if warn_after:
            private["warnafter"] = iat + warn_after
        claims = {
            "aud": list(audiences),
            "exp": iat + lifetime,
            "iat": iat,
            "iss": self.issuer,
            "jti": str(uuid.uuid4()),
            "kubernetes.io": private,
            "nbf": iat,
            "sub": f"{auth.SERVICE_ACCOUNT_PREFIX}{namespace}:{sa_name}",
        }
        return self.sign(claims), now + timedelta(seconds=expiration_seconds)


def _go_quote_list(values: Sequence[str]) -> str:
    """Go's `%q` of a []string: `["a" "b"]`."""
    return "[" + " ".join(json.dumps(v, ensure_ascii=False) for v in values) + "]"


def _unverified_claims(token: str) -> dict[str, Any] | None:
    """The payload of a compact JWS, unverified; None when the token is no JWT (three parts of
    unpadded base64url, the payload a JSON object)."""
    if token.strip().startswith("{"):
        return None
    parts = token.split(".")
    if len(parts) != 3 or not all(_B64URL.fullmatch(p) and len(p) % 4 != 1 for p in parts):
        return None
    try:
        payload = base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4))
        claims = orjson.loads(payload)
    except (binascii.Error, orjson.JSONDecodeError):
        return None
    return claims if isinstance(claims, dict) else None


class ServiceAccountAuthenticator:
    """Validates bearer tokens signed by one of `keys` for one of `issuers`."""

    def __init__(
        self,
        keys: Sequence[VerificationKey],
        issuers: Sequence[str] = (DEFAULT_ISSUER,),
        api_audiences: Sequence[str] | None = None,
    ) -> None:
        self.keys = tuple(keys)
        self._verifiers = [
            (k, _jose_key(k.public_key), jws.JWSRegistry(algorithms=[k.algorithm])) for k in keys
        ]
        self.issuers = frozenset(issuers)
        self.api_audiences: tuple[str, ...] = tuple(
            api_audiences if api_audiences is not None else issuers
        )

    @classmethod
    def for_issuer(cls, issuer: TokenIssuer) -> ServiceAccountAuthenticator:
        """The authenticator for the tokens `issuer` signs."""
        return cls([issuer.key.verification_key()], [issuer.issuer], issuer.api_audiences)

    async def authenticate(
        self,
        token: str,
        lookup: Lookup,
        now: datetime,
        audiences: Sequence[str] | None = None,
    ) -> UserInfo | None:
        """The service account's user; None when the token is not ours; AuthenticationError
        when it is ours but invalid. `audiences` are the request's (default: the API's)."""
        unverified = _unverified_claims(token)
        if unverified is None or unverified.get("iss") not in self.issuers:
            return None
        try:
            signed = jws.extract_compact(token.encode())
        except (JoseError, ValueError):
            return None
        self._verify_signature(signed)
        claims = parse_claims(unverified)
        token_audiences = claims.aud or self.api_audiences
        requested = tuple(audiences) if audiences is not None else self.api_audiences
        if self.api_audiences and not set(token_audiences) & set(requested):
            raise AuthenticationError(
                f"token audiences {_go_quote_list(token_audiences)} is invalid for the target "
                f"audiences {_go_quote_list(requested)}"
            )
        return await _validate(claims, lookup, now)

    def _verify_signature(self, signed: jws.CompactSignature) -> None:
        """The signature must verify with a key of the token's `kid` (any key without one)."""
        kid = signed.headers().get("kid")
        verifiers = self._verifiers
        if isinstance(kid, str) and kid:
            verifiers = [v for v in verifiers if v[0].kid == kid]
        if not verifiers:
            raise AuthenticationError("invalid signature, no keys found")
        for _, key, registry in verifiers:
            try:
                if jws.validate_compact(signed, key, registry=registry):
                    return
            except (JoseError, ValueError):
                continue
        raise AuthenticationError(ERR_SIGNATURE)


def _deleted_before(obj: Obj, cutoff: datetime) -> bool:
    value = meta.deletion_timestamp(obj)
    if not value:
        return False
    try:
        return parse_time(value) < cutoff
    except ValueError:
        return True


async def _validate(claims: Claims, lookup: Lookup, now: datetime) -> UserInfo:
    """The time checks, then the service account and bound objects (claims.go Validate)."""
    t = now.timestamp()
    if claims.nbf is not None and t + LEEWAY_SECONDS < claims.nbf:
        raise AuthenticationError("service account token is not valid yet")
    if claims.exp is not None and t - LEEWAY_SECONDS > claims.exp:
        raise AuthenticationError("service account token has expired")
    if claims.iat is not None and t + LEEWAY_SECONDS < claims.iat:
        raise AuthenticationError("service account token is issued in the future")

    cutoff = now - timedelta(seconds=LEEWAY_SECONDS)
    ns, sa = claims.namespace, claims.serviceaccount
    account = await lookup("serviceaccounts", ns, sa.name)
    if account is None:
        raise AuthenticationError(f'serviceaccounts "{sa.name}" not found')
    if meta.uid(account) != sa.uid:
        raise AuthenticationError(
            f"service account UID ({meta.uid(account)}) does not match claim ({sa.uid})"
        )
    if _deleted_before(account, cutoff):
        raise AuthenticationError(f"service account {ns}/{sa.name} has been deleted")

    for kind, resource, ref in (("secret", "secrets", claims.secret), ("pod", "pods", claims.pod)):
        if ref is None:
            continue
        obj = await lookup(resource, ns, ref.name)
        if obj is None:
            raise AuthenticationError(ERR_INVALIDATED)
        if ref.uid != meta.uid(obj):
            raise AuthenticationError(
                f"{kind} UID ({meta.uid(obj)}) does not match service account {kind} ref "
                f"claim ({ref.uid})"
            )
        if _deleted_before(obj, cutoff):
            raise AuthenticationError(ERR_INVALIDATED)

    node = ("", "")
    if claims.node is not None:
        if claims.pod is None:
            obj = await lookup("nodes", "", claims.node.name)
            if obj is None:
                raise AuthenticationError(ERR_INVALIDATED)
            if claims.node.uid != meta.uid(obj):
                raise AuthenticationError(
                    f"node UID ({meta.uid(obj)}) does not match service account node ref "
                    f"claim ({claims.node.uid})"
                )
            if _deleted_before(obj, cutoff):
                raise AuthenticationError(ERR_INVALIDATED)
        node = (claims.node.name, claims.node.uid)

    pod = (claims.pod.name, claims.pod.uid) if claims.pod is not None else ("", "")
    return service_account_user(ns, sa.name, sa.uid, pod=pod, node=node, jti=claims.jti)
