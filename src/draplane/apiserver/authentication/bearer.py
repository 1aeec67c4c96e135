"""Bearer-token authentication of a request: the static token file, then service-account JWTs
(kube-apiserver's union of token authenticators). No `Authorization` header is anonymous; a
header no authenticator accepts, or an invalid service-account token, is a 401.

Service-account results are cached as kube-apiserver caches its token authenticators'
(`TokenSuccessCacheTTL`, 10 s; failures are not cached): a token seen in the last 10 seconds
is not verified and looked up again, so one whose service account, pod or secret was deleted
keeps working for up to that long, as upstream.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

from draplane.api import errors
from draplane.api.auth import ANONYMOUS_USER, SYSTEM_AUTHENTICATED, UserInfo
from draplane.apiserver.authentication.satokens import (
    AuthenticationError,
    Lookup,
    ServiceAccountAuthenticator,
)
from draplane.apiserver.authn import TokenAuthenticator
from draplane.clock import REAL_CLOCK, Clock

TOKEN_SUCCESS_CACHE_TTL = timedelta(seconds=10)
"""kube-apiserver's default for authenticated tokens (BuiltInAuthenticationOptions)."""
TOKEN_CACHE_SIZE = 4096
"""Entries kept at most (kube-apiserver's striped cache: 32 stripes of 128)."""


class BearerAuthenticator:
    def __init__(
        self,
        token_file: TokenAuthenticator,
        service_accounts: ServiceAccountAuthenticator | None = None,
        lookup: Lookup | None = None,
        *,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        self._token_file = token_file
        self._service_accounts = service_accounts
        self._lookup = lookup
        self._clock = clock
        self._succeeded: dict[bytes, tuple[datetime, UserInfo]] = {}
        """sha256 of a token -> (until when, its user); insertion order is age order."""

    async def authenticate(self, authorization: str | None) -> UserInfo:
        """The request's user (anonymous without credentials); 401 for bad credentials."""
        if not authorization:
            return ANONYMOUS_USER
        user = self._token_file.authenticate(authorization)
        if user is not None:
            return user
        user = await self.authenticate_token(_bearer(authorization))
        if user is None:
            raise errors.unauthorized()
        return user

    async def authenticate_token(self, token: str) -> UserInfo | None:
        """A service-account token's user, None when no authenticator knows it; 401 when it
        is a service-account token that is not valid."""
        if not token or self._service_accounts is None or self._lookup is None:
            return None
        now = self._clock.now()
        key = hashlib.sha256(token.encode()).digest()
        cached = self._succeeded.get(key)
        if cached is not None:
            if now < cached[0]:
                return cached[1]
            del self._succeeded[key]
        try:
            user = await self._service_accounts.authenticate(token, self._lookup, now)
        except AuthenticationError as err:
            raise errors.unauthorized() from err
        if user is None:
            return None
        if SYSTEM_AUTHENTICATED not in user.groups:
            user = UserInfo(user.name, user.uid, (*user.groups, SYSTEM_AUTHENTICATED), user.extra)
        self._remember(key, user, now)
        return user

    def _remember(self, key: bytes, user: UserInfo, now: datetime) -> None:
        if len(self._succeeded) >= TOKEN_CACHE_SIZE:
            for old in [k for k, (until, _) in self._succeeded.items() if until <= now]:
                del self._succeeded[old]
            while len(self._succeeded) >= TOKEN_CACHE_SIZE:
                del self._succeeded[next(iter(self._succeeded))]
        self._succeeded[key] = (now + TOKEN_SUCCESS_CACHE_TTL, user)


def _bearer(authorization: str) -> str:
    scheme, _, token = authorization.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""
