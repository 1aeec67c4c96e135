"""`draplane.tlsbuffers`: every TLS connection opened after `configure` reads into the set
buffer, and bodies many times its size still cross a real HTTPS API server intact."""

from __future__ import annotations

from collections.abc import Iterator

import aiohttp
import pytest

from draplane import tlsbuffers


@pytest.fixture
def small_buffers() -> Iterator[None]:
    before = tlsbuffers.read_buffer_bytes()
    tlsbuffers.configure()
    yield
    tlsbuffers.configure(before)


def test_configure_sets_the_buffer_of_new_connections(small_buffers: None) -> None:
    assert tlsbuffers.read_buffer_bytes() == tlsbuffers.READ_BUFFER_BYTES == 32 * 1024


@pytest.mark.parametrize("size", [0, 1024, 16 * 1024 - 1])
def test_a_buffer_smaller_than_a_record_is_refused(small_buffers: None, size: int) -> None:
    with pytest.raises(ValueError, match="whole record"):
        tlsbuffers.configure(size)
    assert tlsbuffers.read_buffer_bytes() == tlsbuffers.READ_BUFFER_BYTES


@pytest.mark.parametrize("kib", [1, 31, 33, 300])
async def test_bodies_larger_than_the_buffer_cross_https_both_ways(
    small_buffers: None, http: aiohttp.ClientSession, kib: int
) -> None:
    value = "x" * (kib * 1024)
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"big-{kib}"},
        "data": {"value": value},
    }

    async with http.post("/api/v1/namespaces/default/configmaps", json=body) as resp:
        assert resp.status == 201, await resp.text()
    async with http.get(f"/api/v1/namespaces/default/configmaps/big-{kib}") as resp:
        assert resp.status == 200
        assert (await resp.json())["data"]["value"] == value
