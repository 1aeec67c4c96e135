"""The two Kubernetes versions of one control plane (`--kubernetes-version`): each mode's
/version, discovery and served kinds over HTTPS, the mode components read from the API server,
and a data dir that refuses the other mode."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from draplane.api import errors, kinds, versions
from draplane.client.servermode import resolve_mode, server_mode
from draplane.storage import mode_marker
from draplane.storage.memory import MemoryStorage
from draplane.testing.cluster import start_cluster
from draplane.testing.httpserver import HttpServer, start_http_server

MODES = [pytest.param(versions.CLASSIC, id="1.28"), pytest.param(versions.STRUCTURED, id="1.36")]


@pytest.fixture(params=MODES)
async def mode_server(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[HttpServer]:
    srv = await start_http_server(tmp_path / "data", mode=request.param)
    yield srv
    await srv.stop()


async def _get(server: HttpServer, path: str) -> tuple[int, Any]:
    async with (
        server.session() as session,
        session.get(path) as resp,
    ):
        return resp.status, orjson.loads(await resp.read())


def _mode(server: HttpServer) -> versions.Mode:
    return server.registry.kinds.mode


async def test_version_follows_the_mode(mode_server: HttpServer) -> None:
    mode = _mode(mode_server)

    code, info = await _get(mode_server, "/version")

    assert code == 200
    assert (info["major"], info["minor"]) == ("1", str(mode.minor))
    assert info["gitVersion"].startswith(f"v{mode}.")
    assert versions.from_version_info(info) is mode


EXPECTED_RESOURCE_VERSIONS = {
    versions.CLASSIC: (
        ["v1alpha2"],
        {
            "v1alpha2": [
                "resourceclasses",
                "resourceclaims",
                "resourceclaims/status",
                "resourceclaimtemplates",
                "podschedulingcontexts",
                "podschedulingcontexts/status",
            ]
        },
    ),
    versions.STRUCTURED: (
        ["v1", "v1beta2", "v1beta1"],
        {
            "v1": [
                "deviceclasses",
                "resourceclaims",
                "resourceclaims/status",
                "resourceclaimtemplates",
                "resourceslices",
            ],
            "v1beta2": [
                "deviceclasses",
                "resourceclaims",
                "resourceclaims/status",
                "resourceclaimtemplates",
                "resourceslices",
                "devicetaintrules",
            ],
            "v1beta1": [
                "deviceclasses",
                "resourceclaims",
                "resourceclaims/status",
                "resourceclaimtemplates",
                "resourceslices",
            ],
        },
    ),
}


async def test_discovery_serves_the_modes_resource_group(mode_server: HttpServer) -> None:
    group_versions, resources = EXPECTED_RESOURCE_VERSIONS[_mode(mode_server)]

    code, group = await _get(mode_server, "/apis/resource.k8s.io")
    listed = {}
    for version in group_versions:
        _, doc = await _get(mode_server, f"/apis/resource.k8s.io/{version}")
        listed[version] = [r["name"] for r in doc["resources"]]
    other = "v1" if group_versions == ["v1alpha2"] else "v1alpha2"
    other_code, _ = await _get(mode_server, f"/apis/resource.k8s.io/{other}")

    assert code == 200
    assert [v["version"] for v in group["versions"]] == group_versions
    assert group["preferredVersion"]["version"] == group_versions[0]
    assert listed == resources
    assert other_code == 404


async def test_the_other_modes_kinds_are_not_served(mode_server: HttpServer) -> None:
    mode = _mode(mode_server)
    other = kinds.RESOURCE_CLASSES if mode.structured else kinds.DEVICE_CLASSES
    client = mode_server.client()
    try:
        with pytest.raises(errors.StatusError) as err:
            await client.list(other)
        found = await server_mode(client)
    finally:
        await client.close()

    assert err.value.code == 404
    assert found is mode


@pytest.mark.parametrize(
    ("path", "method", "body"),
    [
        pytest.param("resourceclaims", "GET", None, id="list"),
        pytest.param("namespaces/default/resourceclaims/c", "GET", None, id="get"),
        pytest.param("namespaces/default/resourceclaims", "POST", b"{}", id="create"),
    ],
)
async def test_the_other_modes_kinds_say_which_flag_serves_them(
    mode_server: HttpServer, path: str, method: str, body: bytes | None
) -> None:
    mode = _mode(mode_server)
    other = versions.CLASSIC if mode.structured else versions.STRUCTURED
    version = other.resource_claims.version
    async with (
        mode_server.session() as session,
        session.request(method, f"/apis/resource.k8s.io/{version}/{path}", data=body) as resp,
    ):
        code, status = resp.status, orjson.loads(await resp.read())

    assert (code, status["reason"]) == (404, "NotFound")
    assert status["message"] == (
        f"the server could not find the requested resource: this server runs Kubernetes "
        f"{mode.name} ({mode.dra.value}), which does not serve resource.k8s.io/{version} "
        f"resourceclaims; resource.k8s.io/{version} is {other.dra.value}, served by draplane "
        f"started with --kubernetes-version {other.name}"
    )


async def test_an_unknown_kind_is_a_plain_404(mode_server: HttpServer) -> None:
    code, status = await _get(mode_server, "/apis/resource.k8s.io/v1/frobnicators")

    assert (code, status["message"]) == (404, "the server could not find the requested resource")


async def test_the_flag_wins_over_the_servers_answer(mode_server: HttpServer) -> None:
    client = mode_server.client()
    try:
        assert await resolve_mode(client, versions.STRUCTURED) is versions.STRUCTURED
    finally:
        await client.close()


@pytest.mark.parametrize(
    ("first", "then"),
    [
        pytest.param(versions.CLASSIC, versions.STRUCTURED, id="1.28-then-1.36"),
        pytest.param(versions.STRUCTURED, versions.CLASSIC, id="1.36-then-1.28"),
    ],
)
async def test_a_data_dir_refuses_the_other_mode(
    tmp_path: Path, first: versions.Mode, then: versions.Mode
) -> None:
    data_dir = tmp_path / "data"
    srv = await start_http_server(data_dir, mode=first)
    await srv.stop()

    with pytest.raises(mode_marker.ModeMismatchError) as err:
        await start_http_server(data_dir, mode=then, storage=MemoryStorage())
    again = await start_http_server(data_dir, mode=first)
    await again.stop()

    assert str(err.value) == (
        f"data dir {data_dir} holds a Kubernetes {first} cluster; start it with "
        f"--kubernetes-version {first}, or use another --data-dir for {then}"
    )
    assert (data_dir / mode_marker.MARKER).read_text() == f"{first}\n"


def test_a_data_dir_from_before_the_marker_is_a_1_28_one(tmp_path: Path) -> None:
    (tmp_path / "ca.crt").write_text("")

    with pytest.raises(mode_marker.ModeMismatchError):
        mode_marker.ensure_mode(tmp_path, versions.STRUCTURED)
    mode_marker.ensure_mode(tmp_path, versions.CLASSIC)

    assert mode_marker.recorded_mode(tmp_path) is versions.CLASSIC


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1.28", versions.CLASSIC),
        ("v1.28.0", versions.CLASSIC),
        ("1.36", versions.STRUCTURED),
        ("v1.36.3", versions.STRUCTURED),
    ],
)
def test_versions_parse(value: str, expected: versions.Mode) -> None:
    assert versions.parse(value) is expected


@pytest.mark.parametrize("value", ["1.29", "2", "", "v1.36.x"])
def test_unsupported_versions_name_the_choices(value: str) -> None:
    with pytest.raises(ValueError, match=r"supported: 1\.28, 1\.36"):
        versions.parse(value)


def _new(data_dir: Path) -> None:
    data_dir.mkdir()


def _before_the_marker(data_dir: Path) -> None:
    data_dir.mkdir()
    (data_dir / "ca.crt").write_text("")


def _written_in(mode: versions.Mode) -> Any:
    return lambda data_dir: mode_marker.ensure_mode(data_dir, mode)


@pytest.mark.parametrize(
    ("prepare", "flag", "expected"),
    [
        pytest.param(_new, None, versions.STRUCTURED, id="new-dir-is-1.36"),
        pytest.param(_new, versions.CLASSIC, versions.CLASSIC, id="new-dir-flag-1.28"),
        pytest.param(_written_in(versions.CLASSIC), None, versions.CLASSIC, id="1.28-dir-keeps"),
        pytest.param(
            _written_in(versions.STRUCTURED), None, versions.STRUCTURED, id="1.36-dir-keeps"
        ),
        pytest.param(_before_the_marker, None, versions.CLASSIC, id="pre-marker-dir-is-1.28"),
        pytest.param(
            _written_in(versions.CLASSIC), versions.STRUCTURED, versions.STRUCTURED, id="flag-wins"
        ),
    ],
)
def test_a_data_dir_without_the_flag_keeps_its_recorded_mode(
    tmp_path: Path, prepare: Any, flag: versions.Mode | None, expected: versions.Mode
) -> None:
    data_dir = tmp_path / "data"
    prepare(data_dir)

    assert mode_marker.mode_for(data_dir, flag) is expected


def test_commands_default_to_1_36_and_the_test_helpers_to_1_28() -> None:
    helpers = (start_cluster, start_http_server)
    defaults = tuple(inspect.signature(h).parameters["mode"].default for h in helpers)
    assert (versions.DEFAULT, *defaults) == (
        versions.STRUCTURED,
        versions.CLASSIC,
        versions.CLASSIC,
    )


async def test_openapi_v3_follows_the_mode(mode_server: HttpServer) -> None:
    mode = _mode(mode_server)

    code, index = await _get(mode_server, "/openapi/v3")
    resource_paths = sorted(p for p in index["paths"] if p.startswith("apis/resource.k8s.io/"))

    assert code == 200
    if mode.structured:
        assert resource_paths == [
            "apis/resource.k8s.io/v1",
            "apis/resource.k8s.io/v1beta1",
            "apis/resource.k8s.io/v1beta2",
        ]
        _, doc = await _get(mode_server, "/openapi/v3/apis/resource.k8s.io/v1")
        assert "io.k8s.api.resource.v1.ResourceSlice" in doc["components"]["schemas"]
        assert doc["info"]["version"] == "v1.36.0"
    else:
        assert resource_paths == ["apis/resource.k8s.io/v1alpha2"]
