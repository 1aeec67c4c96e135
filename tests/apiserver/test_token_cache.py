"""BearerAuthenticator's cache of authenticated service-account tokens (kube-apiserver's
10 s TokenSuccessCacheTTL; failures not cached), on the injected clock."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from draplane.api import errors
from draplane.api.meta import Obj
from draplane.apiserver.authentication import bearer, sakeys
from draplane.apiserver.authentication.bearer import BearerAuthenticator
from draplane.apiserver.authentication.satokens import ServiceAccountAuthenticator, TokenIssuer
from draplane.apiserver.authn import TokenAuthenticator
from draplane.testing.clock import FakeClock

ISSUER = TokenIssuer(sakeys.generate("ES256"))
SA_UID = "sa-uid-1"
SERVICE_ACCOUNT = {"metadata": {"name": "builder", "namespace": "default", "uid": SA_UID}}


@dataclass
class Store:
    """What the service-account validation reads, with a count of its reads."""

    objects: dict[tuple[str, str, str], Obj] = field(default_factory=dict)
    reads: int = 0

    async def get(self, resource: str, namespace: str, name: str) -> Obj | None:
        self.reads += 1
        return self.objects.get((resource, namespace, name))


@dataclass
class Env:
    clock: FakeClock
    store: Store
    authn: BearerAuthenticator

    def token(self, name: str = "builder", uid: str = SA_UID) -> str:
        token, _ = ISSUER.issue("default", name, uid, [], 3600, None, self.clock.now())
        return f"Bearer {token}"


@pytest.fixture
def env(tmp_path: Path) -> Env:
    clock = FakeClock()
    store = Store({("serviceaccounts", "default", "builder"): SERVICE_ACCOUNT})
    token_file = tmp_path / "tokens.csv"
    token_file.write_text("")
    authn = BearerAuthenticator(
        TokenAuthenticator(token_file),
        ServiceAccountAuthenticator.for_issuer(ISSUER),
        store.get,
        clock=clock,
    )
    return Env(clock, store, authn)


@pytest.mark.parametrize(
    ("after", "valid"),
    [(9.0, True), (10.0, False)],
    ids=["within-ttl", "ttl-passed"],
)
async def test_a_deleted_service_account_s_token_works_until_the_ttl_passes(
    env: Env, after: float, valid: bool
) -> None:
    token = env.token()
    user = await env.authn.authenticate(token)
    assert user.name == "system:serviceaccount:default:builder"
    del env.store.objects[("serviceaccounts", "default", "builder")]

    env.clock.step(after)
    if valid:
        assert await env.authn.authenticate(token) == user
    else:
        with pytest.raises(errors.StatusError) as caught:
            await env.authn.authenticate(token)
        assert caught.value.code == 401


async def test_a_cached_token_is_not_looked_up_again(env: Env) -> None:
    token = env.token()
    await env.authn.authenticate(token)
    reads = env.store.reads

    for _ in range(3):
        await env.authn.authenticate(token)

    assert env.store.reads == reads


async def test_failures_are_not_cached(env: Env) -> None:
    token = env.token(name="late", uid="late-uid")
    with pytest.raises(errors.StatusError):
        await env.authn.authenticate(token)

    env.store.objects[("serviceaccounts", "default", "late")] = {
        "metadata": {"name": "late", "namespace": "default", "uid": "late-uid"}
    }

    assert (await env.authn.authenticate(token)).name == "system:serviceaccount:default:late"


async def test_the_cache_keeps_at_most_its_size(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bearer, "TOKEN_CACHE_SIZE", 3)
    tokens = [env.token() for _ in range(5)]  # each has its own jti
    for token in tokens:
        await env.authn.authenticate(token)
    reads = env.store.reads

    await env.authn.authenticate(tokens[-1])  # among the newest: cached
    assert env.store.reads == reads
    await env.authn.authenticate(tokens[0])  # the oldest was dropped: validated again
    assert env.store.reads > reads
