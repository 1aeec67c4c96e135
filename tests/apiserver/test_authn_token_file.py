"""The static token file: a user name the format cannot hold is rejected without leaving the
file changed or a temporary file behind; the authenticator answers known tokens from memory,
sees added users at once and changed ones within `RECHECK_SECONDS`."""

from __future__ import annotations

from pathlib import Path

import pytest

from draplane.api import auth
from draplane.apiserver import authn


@pytest.mark.parametrize(
    "user",
    [
        pytest.param("a,b", id="comma"),
        pytest.param('quote"d', id="quote"),
        pytest.param("new\nline", id="newline"),
    ],
)
def test_rejected_user_leaves_token_file_as_it_was(tmp_path: Path, user: str) -> None:
    authn.ensure_bootstrap_tokens(tmp_path)
    before = authn.token_file(tmp_path).read_text()
    with pytest.raises(ValueError, match="may not contain"):
        authn.ensure_user_token(tmp_path, user)
    assert authn.token_file(tmp_path).read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tokens", "tokens.lock"]


class Monotonic:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _bearer(token: str) -> str:
    return f"Bearer {token}"


def test_token_authenticator_caches_known_tokens_and_sees_new_ones(tmp_path: Path) -> None:
    clock = Monotonic()
    path = authn.token_file(tmp_path)
    admin = authn.ensure_user_token(tmp_path, auth.ADMIN, (auth.SYSTEM_MASTERS,))
    authenticator = authn.TokenAuthenticator(path, monotonic=clock)
    first = authenticator.authenticate(_bearer(admin))
    assert first is not None
    assert (first.name, first.groups) == (
        auth.ADMIN,
        (auth.SYSTEM_MASTERS, auth.SYSTEM_AUTHENTICATED),
    )

    # Added by another process: known at once, without waiting for the recheck.
    late = authn.ensure_user_token(tmp_path, "late-user", ())
    found = authenticator.authenticate(_bearer(late))
    assert found is not None and found.name == "late-user"

    # The file replaced without the admin: still known until the recheck, then not.
    kept = [line for line in path.read_text().splitlines() if not line.startswith(admin)]
    path.write_text("\n".join(kept) + "\n")
    assert authenticator.authenticate(_bearer(admin)) == first
    clock.now += authn.RECHECK_SECONDS
    assert authenticator.authenticate(_bearer(admin)) is None
    assert authenticator.authenticate(_bearer("unknown")) is None
    assert authenticator.authenticate("Basic abc") is None
