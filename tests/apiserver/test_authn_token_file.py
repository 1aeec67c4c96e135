"""The static token file: a user name the format cannot hold is rejected without leaving the
file changed or a temporary file behind."""

from __future__ import annotations

from pathlib import Path

import pytest

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
