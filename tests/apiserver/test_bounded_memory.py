"""Memory stays bounded for requests that once amplified a small body into a huge object.

The server runs in this process, so tracemalloc's peak over one HTTP request is the server's
allocation for it. Each bomb is sized so that an unbounded server would allocate well over the
limit (but not enough to exhaust the machine); a bounded one rejects it having allocated a few
times the 3 MiB object limit.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from draplane.testing.hostile import Hostile

pytestmark = pytest.mark.asyncio(loop_scope="module")

PEAK_LIMIT = 64 * 1024 * 1024


@dataclass(frozen=True)
class Bomb:
    method: str
    path: str
    body: object
    content_type: str
    codes: tuple[int, ...]


def _copy_bomb(ops: int) -> list[dict[str, str]]:
    copies = [
        {"op": "copy", "from": "/metadata", "path": f"/metadata/annotations/x{i}"}
        for i in range(ops)
    ]
    return [{"op": "add", "path": "/metadata/annotations", "value": {}}, *copies]


# 16 doublings of a ~1 KB object: ~100 MB unbounded.
COPY_BOMB = Bomb(
    "PATCH",
    "/api/v1/namespaces/fuzz/configmaps/fuzz-cm",
    _copy_bomb(16),
    "application/json-patch+json",
    (413, 422),  # the object limit, or first the limit on what copies add
)
# 10^6 aliased strings of 40 bytes: ~45 MB of JSON unbounded, 300 bytes of YAML.
ALIAS_BOMB = Bomb(
    "POST",
    "/api/v1/namespaces/fuzz/configmaps",
    b'metadata: {name: bomb}\na: &a ["'
    + b"x" * 40
    + b'"]\n'
    + b"".join(
        f"{c}: &{c} [{', '.join([f'*{p}'] * 10)}]\n".encode()
        for p, c in zip("abcdef", "bcdefg", strict=True)
    ),
    "application/yaml",
    (413,),
)


@pytest.fixture
def traced() -> Iterator[None]:
    tracemalloc.start()
    yield
    tracemalloc.stop()


@pytest.mark.parametrize(
    "bomb",
    [pytest.param(COPY_BOMB, id="json-patch-copy"), pytest.param(ALIAS_BOMB, id="yaml-aliases")],
)
async def test_bomb_is_rejected_within_bounded_memory(
    hostile: Hostile, traced: None, bomb: Bomb
) -> None:
    tracemalloc.reset_peak()
    base, _ = tracemalloc.get_traced_memory()
    response = await hostile.check(
        bomb.method, bomb.path, body=bomb.body, headers={"Content-Type": bomb.content_type}
    )
    _, peak = tracemalloc.get_traced_memory()
    assert response.status in bomb.codes, response
    assert peak - base < PEAK_LIMIT, f"peak {(peak - base) / 2**20:.1f} MiB"
    stored = await hostile.send("GET", "/api/v1/namespaces/fuzz/configmaps/fuzz-cm")
    assert not (stored.body["metadata"].get("annotations") or {}).keys() & {"x0", "x1"}
