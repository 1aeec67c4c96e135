"""What a kind's hooks may use of the API server: the narrow `ServerContext`.

Strategy hooks (subresource handlers, create-only answers, storage-time checks) and the generic
store receive this Protocol, never the registry itself: storage, the clock, the authorizers, the
served kinds, a freshness wait on the watch cache, the guaranteed update, the admission chain,
lookups of stored objects, and the few services one kind needs (service IPs, tokens).
`Registry` satisfies it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from draplane.api.auth import UserInfo
from draplane.api.catalog import Catalog
from draplane.api.meta import Obj
from draplane.api.request import Request
from draplane.apiserver.admission import ValidatingPlugin
from draplane.apiserver.authentication.bearer import BearerAuthenticator
from draplane.apiserver.authentication.satokens import TokenIssuer
from draplane.apiserver.authorization import Authorizer, RuleResolver
from draplane.apiserver.serviceips import ServiceAllocator
from draplane.clock import Clock
from draplane.storage.interface import Storage

Mutation = Callable[[Obj], Obj]


class Freshness(Protocol):
    def wait_until_fresh(self, revision: int, timeout: float) -> Awaitable[bool]:
        """Whether the watch cache reached `revision` within `timeout` seconds."""
        ...


class GuaranteedUpdater(Protocol):
    def guaranteed_update(self, user: UserInfo, req: Request, mutate: Mutation) -> Awaitable[Obj]:
        """Read, mutate, admit, validate and store the object `req` names, retrying on a
        conflict with the stored revision."""
        ...


class ServerContext(Protocol):
    @property
    def storage(self) -> Storage: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def authorizer(self) -> Authorizer: ...

    @property
    def rule_resolvers(self) -> Sequence[RuleResolver]: ...

    @property
    def kinds(self) -> Catalog: ...

    @property
    def watch_cache(self) -> Freshness: ...

    @property
    def writer(self) -> GuaranteedUpdater: ...

    @property
    def admission(self) -> ValidatingPlugin:
        """The admission chain (its validating plugins), for writes that are not a stored
        object's (a TokenRequest)."""
        ...

    @property
    def service_ips(self) -> ServiceAllocator: ...

    @property
    def token_authenticator(self) -> BearerAuthenticator | None: ...

    @property
    def token_issuer(self) -> TokenIssuer | None: ...

    def lookup(self, resource: str, namespace: str, name: str) -> Awaitable[Obj | None]:
        """A stored core/v1 object by resource name (the token machinery's lookup)."""
        ...
