"""Whichever writer creates the data dir (certificates, tokens, kubeconfig), it is 0700 and
every file in it 0600, whatever the umask; an existing dir open to others is kept, with a
warning."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from draplane.apiserver import authn, certs
from draplane.apiserver.kubeconfig import build_kubeconfig, write_kubeconfig


@pytest.fixture(autouse=True)
def _permissive_umask() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _kubeconfig(data_dir: Path) -> None:
    paths = certs.ensure_certs(data_dir)
    config = build_kubeconfig(
        server="https://127.0.0.1:6443",
        ca_pem=paths.ca_cert.read_bytes(),
        user="admin",
        token=authn.ensure_user_token(data_dir, "admin"),
    )
    write_kubeconfig(data_dir / "kubeconfig", config)


@pytest.mark.parametrize(
    "write",
    [
        pytest.param(certs.ensure_certs, id="certs"),
        pytest.param(authn.ensure_bootstrap_tokens, id="tokens"),
        pytest.param(_kubeconfig, id="kubeconfig"),
    ],
)
def test_a_data_dir_created_by_a_writer_is_private(
    tmp_path: Path, write: Callable[[Path], object]
) -> None:
    data_dir = tmp_path / "parent" / "data"

    write(data_dir)

    assert _mode(data_dir) == 0o700
    written = {p.name: _mode(p) for p in data_dir.iterdir()}
    assert written and set(written.values()) == {0o600}, written


def test_an_existing_data_dir_open_to_others_is_kept_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o755)

    with caplog.at_level(logging.WARNING):
        authn.ensure_bootstrap_tokens(data_dir)

    assert _mode(data_dir) == 0o755
    assert "recommended mode is 700" in caplog.text
    assert _mode(data_dir / "tokens") == 0o600
