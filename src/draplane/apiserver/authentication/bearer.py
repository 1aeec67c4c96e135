"""Bearer-token authentication of a request: the static token file, then service-account JWTs
(kube-apiserver's union of token authenticators). No `Authorization` header is anonymous; a
header no authenticator accepts, or an invalid service-account token, is a 401."""

from __future__ import annotations

from draplane.api import errors
from draplane.api.auth import ANONYMOUS_USER, SYSTEM_AUTHENTICATED, UserInfo
from draplane.apiserver.authentication.satokens import (
    AuthenticationError,
    Lookup,
    ServiceAccountAuthenticator,
)
from draplane.apiserver.authn import TokenAuthenticator
from draplane.clock import REAL_CLOCK, Clock


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
        try:
            user = await self._service_accounts.authenticate(token, self._lookup, self._clock.now())
        except AuthenticationError as err:
            raise errors.unauthorized() from err
        if user is not None and SYSTEM_AUTHENTICATED not in user.groups:
            user = UserInfo(user.name, user.uid, (*user.groups, SYSTEM_AUTHENTICATED), user.extra)
        return user


def _bearer(authorization: str) -> str:
    scheme, _, token = authorization.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""
