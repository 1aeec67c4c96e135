"""The apps/v1 and batch/v1 kinds over HTTPS (one server for the module): create, get, list,
the `scale` subresource (GET, PUT, merge/JSON patch, 409/422), the `status` subresource (spec
and generation untouched), generation on spec changes, Tables with upstream's columns,
discovery, Job selector generation, what DELETE answers, and the generation bump of the first
deletion mark."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest
import pytest_asyncio

from draplane.api import kinds
from draplane.api.kinds import ResourceType
from draplane.testing.httpserver import HttpServer, start_http_server
from draplane.testing.workloadbuilders import (
    WorkloadBuilder,
    make_controller_revision,
    make_cron_job,
    make_daemon_set,
    make_deployment,
    make_job,
    make_replica_set,
    make_stateful_set,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[HttpServer]:
    srv = await start_http_server(tmp_path_factory.mktemp("workloads"))
    yield srv
    await srv.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def http(server: HttpServer) -> AsyncIterator[aiohttp.ClientSession]:
    async with server.session() as session:
        yield session


def _path(rt: ResourceType, name: str = "", sub: str = "", namespace: str = "default") -> str:
    path = f"/apis/{rt.group}/{rt.version}/namespaces/{namespace}/{rt.resource}"
    if name:
        path += f"/{name}"
    if sub:
        path += f"/{sub}"
    return path


async def _call(
    http: aiohttp.ClientSession,
    method: str,
    path: str,
    body: Any = None,
    content_type: str = "application/json",
    accept: str = "application/json",
) -> tuple[int, Any]:
    data = orjson.dumps(body) if body is not None else None
    headers = {"Content-Type": content_type, "Accept": accept}
    async with http.request(method, path, data=data, headers=headers) as resp:
        return resp.status, orjson.loads(await resp.read())


KINDS = [
    (kinds.DEPLOYMENTS, make_deployment("d1")),
    (kinds.REPLICA_SETS, make_replica_set("r1")),
    (kinds.STATEFUL_SETS, make_stateful_set("s1")),
    (kinds.DAEMON_SETS, make_daemon_set("a1")),
    (kinds.CONTROLLER_REVISIONS, make_controller_revision("c1")),
    (kinds.JOBS, make_job("j1")),
    (kinds.CRON_JOBS, make_cron_job("n1")),
]


@pytest.mark.parametrize(("rt", "builder"), KINDS, ids=lambda v: getattr(v, "kind", ""))
async def test_create_get_list_delete(
    http: aiohttp.ClientSession, rt: ResourceType, builder: WorkloadBuilder
) -> None:
    obj = builder.obj()
    name = obj["metadata"]["name"]
    code, created = await _call(http, "POST", _path(rt), obj)
    get_code, got = await _call(http, "GET", _path(rt, name))
    _, listing = await _call(http, "GET", _path(rt))
    del_code, deleted = await _call(
        http, "DELETE", _path(rt, name), {"propagationPolicy": "Background"}
    )
    gone, _ = await _call(http, "GET", _path(rt, name))

    assert (code, get_code, del_code, gone) == (201, 200, 200, 404)
    assert created["metadata"]["generation"] == 1 and got == created
    assert (created["apiVersion"], created["kind"]) == (rt.api_version, rt.kind)
    assert [i["metadata"]["name"] for i in listing["items"]] == [name]
    assert listing["kind"] == rt.list_kind
    assert deleted == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {
            "name": name,
            "group": rt.group,
            "kind": rt.resource,
            "uid": created["metadata"]["uid"],
        },
    }


async def test_scale_get_put_patch(http: aiohttp.ClientSession) -> None:
    rt = kinds.DEPLOYMENTS
    _, created = await _call(http, "POST", _path(rt), make_deployment("sc").replicas(2).obj())
    _, scale = await _call(http, "GET", _path(rt, "sc", "scale"))
    put_code, put = await _call(
        http,
        "PUT",
        _path(rt, "sc", "scale"),
        {**scale, "spec": {"replicas": 4}},
    )
    patch_code, patched = await _call(
        http,
        "PATCH",
        _path(rt, "sc", "scale"),
        {"spec": {"replicas": 0}},
        "application/merge-patch+json",
    )
    json_code, json_patched = await _call(
        http,
        "PATCH",
        _path(rt, "sc", "scale"),
        [{"op": "add", "path": "/spec/replicas", "value": 3}],
        "application/json-patch+json",
    )
    stale_code, stale = await _call(
        http, "PUT", _path(rt, "sc", "scale"), {**scale, "spec": {"replicas": 9}}
    )
    bad_code, bad = await _call(
        http,
        "PATCH",
        _path(rt, "sc", "scale"),
        {"spec": {"replicas": -2}},
        "application/merge-patch+json",
    )
    _, stored = await _call(http, "GET", _path(rt, "sc"))

    assert scale == {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: created["metadata"][k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
        },
        "spec": {"replicas": 2},
        "status": {"replicas": 0, "selector": "app=sc"},
    }
    assert (put_code, put["spec"]) == (200, {"replicas": 4})
    assert (patch_code, patched["spec"]) == (200, {})  # 0 is omitted in autoscaling/v1
    assert (json_code, json_patched["spec"]) == (200, {"replicas": 3})
    assert (stale_code, stale["reason"]) == (409, "Conflict")
    assert (bad_code, bad["message"]) == (
        422,
        'Scale.autoscaling "sc" is invalid: spec.replicas: Invalid value: -2: '
        "must be greater than or equal to 0",
    )
    assert stored["spec"]["replicas"] == 3
    assert stored["metadata"]["generation"] == 4


@pytest.mark.parametrize(
    ("rt", "builder", "status", "spec_change"),
    [
        (
            kinds.DEPLOYMENTS,
            make_deployment("st-d"),
            {"replicas": 1, "readyReplicas": 1},
            {"minReadySeconds": 3},
        ),
        (
            kinds.STATEFUL_SETS,
            make_stateful_set("st-s"),
            {"replicas": 1, "readyReplicas": 1},
            {"minReadySeconds": 3},
        ),
        (kinds.JOBS, make_job("st-j"), {"active": 1}, {"parallelism": 3}),
    ],
    ids=["deployment", "statefulset", "job"],
)
async def test_status_subresource_leaves_spec_and_generation(
    http: aiohttp.ClientSession,
    rt: ResourceType,
    builder: WorkloadBuilder,
    status: Any,
    spec_change: Any,
) -> None:
    obj = builder.obj()
    name = obj["metadata"]["name"]
    _, created = await _call(http, "POST", _path(rt), {**obj, "status": status})
    changed = {**created, "status": status, "spec": {**created["spec"], "paused": True}}
    code, updated = await _call(http, "PUT", _path(rt, name, "status"), changed)
    main = {**updated, "status": {"replicas": 7}}
    main["spec"] = {**updated["spec"], **spec_change}
    _, spec_updated = await _call(http, "PUT", _path(rt, name), main)

    # Create drops the status sent; StatefulSets always carry replicas and availableReplicas.
    assert created["status"] == (
        {"replicas": 0, "availableReplicas": 0} if rt is kinds.STATEFUL_SETS else {}
    )
    assert code == 200 and {**updated["status"], **status} == updated["status"]
    assert updated["spec"] == created["spec"] and updated["metadata"]["generation"] == 1
    assert spec_updated["status"] == updated["status"]
    assert spec_updated["metadata"]["generation"] == 2


async def test_job_selector_and_labels_are_generated(http: aiohttp.ClientSession) -> None:
    _, job = await _call(http, "POST", _path(kinds.JOBS), make_job("gen").obj())
    manual_code, manual = await _call(
        http,
        "POST",
        _path(kinds.JOBS),
        make_job("man").set("spec.manualSelector", True).obj(),
    )
    uid = job["metadata"]["uid"]
    generated = {
        "app": "gen",
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": "gen",
        "controller-uid": uid,
        "job-name": "gen",
    }
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert job["spec"]["template"]["metadata"]["labels"] == generated
    assert job["metadata"]["labels"] == generated
    assert manual_code == 422
    assert [c["field"] for c in manual["details"]["causes"]] == [
        "spec.selector",
        "spec.template.metadata.labels",
    ]


async def test_job_delete_without_policy_orphans(http: aiohttp.ClientSession) -> None:
    await _call(http, "POST", _path(kinds.JOBS), make_job("orph").obj())
    code, answer = await _call(http, "DELETE", _path(kinds.JOBS, "orph"))
    assert code == 200 and answer["kind"] == "Job"
    assert answer["metadata"]["finalizers"] == ["orphan"]
    assert answer["metadata"]["deletionTimestamp"]


async def test_invalid_deployment_is_422_with_causes(http: aiohttp.ClientSession) -> None:
    code, status = await _call(
        http, "POST", _path(kinds.DEPLOYMENTS), make_deployment("bad").selector({"x": "y"}).obj()
    )
    assert code == 422
    assert status["message"] == (
        'Deployment.apps "bad" is invalid: spec.template.metadata.labels: Invalid value: '
        '{"app":"bad"}: `selector` does not match template `labels`'
    )
    assert status["details"] == {
        "name": "bad",
        "group": "apps",
        "kind": "Deployment",
        "causes": [
            {
                "reason": "FieldValueInvalid",
                "message": 'Invalid value: {"app":"bad"}: `selector` does not match template '
                "`labels`",
                "field": "spec.template.metadata.labels",
            }
        ],
    }


async def test_annotations_bump_deployment_generation_only(http: aiohttp.ClientSession) -> None:
    for rt, builder in (
        (kinds.DEPLOYMENTS, make_deployment("ann")),
        (kinds.REPLICA_SETS, make_replica_set("ann")),
    ):
        await _call(http, "POST", _path(rt), builder.obj())
        _, patched = await _call(
            http,
            "PATCH",
            _path(rt, "ann"),
            {"metadata": {"annotations": {"a": "b"}}},
            "application/merge-patch+json",
        )
        expected = 2 if rt is kinds.DEPLOYMENTS else 1
        assert patched["metadata"]["generation"] == expected, rt.kind


async def test_daemon_set_template_generation(http: aiohttp.ClientSession) -> None:
    _, created = await _call(http, "POST", _path(kinds.DAEMON_SETS), make_daemon_set("tg").obj())
    _, patched = await _call(
        http,
        "PATCH",
        _path(kinds.DAEMON_SETS, "tg"),
        {"spec": {"template": {"spec": {"containers": [{"name": "ctr", "image": "busybox"}]}}}},
        "application/strategic-merge-patch+json",
    )
    key = "deprecated.daemonset.template.generation"
    assert created["metadata"]["annotations"] == {key: "1"}
    assert patched["metadata"]["annotations"] == {key: "2"}
    assert patched["spec"]["template"]["spec"]["containers"][0]["image"] == "busybox"


TABLES = [
    (
        kinds.DEPLOYMENTS,
        make_deployment("tb-d").replicas(3),
        ["Name", "Ready", "Up-to-date", "Available", "Age", "Containers", "Images", "Selector"],
        ["tb-d", "0/3", 0, 0, "ctr", "registry.k8s.io/pause:3.9", "app=tb-d"],
    ),
    (
        kinds.REPLICA_SETS,
        make_replica_set("tb-r").replicas(2),
        ["Name", "Desired", "Current", "Ready", "Age", "Containers", "Images", "Selector"],
        ["tb-r", 2, 0, 0, "ctr", "registry.k8s.io/pause:3.9", "app=tb-r"],
    ),
    (
        kinds.STATEFUL_SETS,
        make_stateful_set("tb-s"),
        ["Name", "Ready", "Age", "Containers", "Images"],
        ["tb-s", "0/1", "ctr", "registry.k8s.io/pause:3.9"],
    ),
    (
        kinds.DAEMON_SETS,
        make_daemon_set("tb-a").node_selector({"role": "gpu"}),
        [
            "Name",
            "Desired",
            "Current",
            "Ready",
            "Up-to-date",
            "Available",
            "Node Selector",
            "Age",
            "Containers",
            "Images",
            "Selector",
        ],
        ["tb-a", 0, 0, 0, 0, 0, "role=gpu", "ctr", "registry.k8s.io/pause:3.9", "app=tb-a"],
    ),
    (
        kinds.JOBS,
        make_job("tb-j").parallelism(2),
        ["Name", "Completions", "Duration", "Age", "Containers", "Images", "Selector"],
        ["tb-j", "0/1 of 2", "", "ctr", "registry.k8s.io/pause:3.9", None],
    ),
    (
        kinds.CRON_JOBS,
        make_cron_job("tb-c"),
        [
            "Name",
            "Schedule",
            "Timezone",
            "Suspend",
            "Active",
            "Last Schedule",
            "Age",
            "Containers",
            "Images",
            "Selector",
        ],
        [
            "tb-c",
            "*/5 * * * *",
            "<none>",
            False,
            0,
            "<none>",
            "ctr",
            "registry.k8s.io/pause:3.9",
            "<none>",
        ],
    ),
    (
        kinds.CONTROLLER_REVISIONS,
        make_controller_revision("tb-cr", revision=3).owner(
            "StatefulSet", "web", "u1", api_version="apps/v1"
        ),
        ["Name", "Controller", "Revision", "Age"],
        ["tb-cr", "statefulset.apps/web", 3],
    ),
]


@pytest.mark.parametrize(
    ("rt", "builder", "columns", "cells"), TABLES, ids=lambda v: getattr(v, "kind", "")
)
async def test_tables(
    http: aiohttp.ClientSession,
    rt: ResourceType,
    builder: WorkloadBuilder,
    columns: list[str],
    cells: list[Any],
) -> None:
    obj = builder.obj()
    await _call(http, "POST", _path(rt), obj)
    _, table = await _call(http, "GET", _path(rt, obj["metadata"]["name"]), accept=TABLE)

    assert [c["name"] for c in table["columnDefinitions"]] == columns
    row = list(table["rows"][0]["cells"])
    del row[columns.index("Age")]
    if cells[-1] is None:  # the Job's generated selector names its uid
        assert row[-1].startswith("batch.kubernetes.io/controller-uid=")
        row, cells = row[:-1], cells[:-1]
    assert row == cells


async def test_discovery_lists_workloads(http: aiohttp.ClientSession) -> None:
    _, apps = await _call(http, "GET", "/apis/apps/v1")
    _, batch = await _call(http, "GET", "/apis/batch/v1")
    entries = {e["name"]: e for e in apps["resources"] + batch["resources"]}

    assert entries["deployments/scale"] == {
        "name": "deployments/scale",
        "singularName": "",
        "namespaced": True,
        "kind": "Scale",
        "verbs": ["get", "patch", "update"],
        "group": "autoscaling",
        "version": "v1",
    }
    assert entries["deployments"]["shortNames"] == ["deploy"]
    assert entries["deployments"]["categories"] == ["all"]
    assert "daemonsets/scale" not in entries
    assert {"jobs", "jobs/status", "cronjobs", "cronjobs/status"} <= set(entries)


async def test_deletion_mark_bumps_generation(http: aiohttp.ClientSession) -> None:
    await _call(http, "POST", _path(kinds.DEPLOYMENTS), make_deployment("fg").obj())
    code, marked = await _call(
        http, "DELETE", _path(kinds.DEPLOYMENTS, "fg"), {"propagationPolicy": "Foreground"}
    )
    again_code, again = await _call(
        http, "DELETE", _path(kinds.DEPLOYMENTS, "fg"), {"propagationPolicy": "Foreground"}
    )
    assert code == 200 and marked["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert marked["metadata"]["generation"] == 2
    assert again_code == 200 and again["metadata"]["generation"] == 2  # only the first mark
