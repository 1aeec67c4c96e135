"""The simulated kubelet's rules for kubelet plugins that need no socket: which DRA service a
plugin's `supported_versions` gets, and a checkpoint that cannot be read."""

from __future__ import annotations

from pathlib import Path

import pytest

from draplane.node import RegistrationError, choose_service
from draplane.node._checkpoint import Checkpoint


@pytest.mark.parametrize(
    ("supported", "chosen"),
    [
        pytest.param(["v1.DRAPlugin", "v1beta1.DRAPlugin"], "v1.DRAPlugin", id="newest-first"),
        pytest.param(["v1beta1.DRAPlugin", "v1.DRAPlugin"], "v1beta1.DRAPlugin", id="plugin-order"),
        pytest.param(["v9.DRAPlugin", "v1beta1.DRAPlugin"], "v1beta1.DRAPlugin", id="skip-unknown"),
        pytest.param(["v9.DRAPlugin"], "none of services supported", id="none-supported"),
        pytest.param([], "empty list of supported gRPC services", id="empty"),
    ],
)
def test_service_choice(supported: list[str], chosen: str) -> None:
    try:
        assert choose_service(supported) == chosen
    except RegistrationError as err:
        assert chosen in str(err)


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"{", id="not-json"),
        pytest.param(b'{"claims": [{"uid": "x"}]}', id="entry-without-name"),
        pytest.param(b'{"claims": 3}', id="claims-not-a-list"),
    ],
)
def test_an_unreadable_checkpoint_starts_empty(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "dra_manager_state"
    path.write_bytes(content)
    assert Checkpoint(path).claims == {}
