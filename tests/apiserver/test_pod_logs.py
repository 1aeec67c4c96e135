"""`GET pods/NAME/log` over HTTP: the log text built from the stored pod, its ConfigMaps and its
claims; container choice, PodLogOptions (tail, timestamps, previous, since, limitBytes) and
their errors; `follow` until the container terminates; RBAC on `pods/log`."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import aiohttp
import orjson
import pytest

from draplane.api import kinds, meta
from draplane.api.meta import Obj
from draplane.testing.apistate import seed_objects
from draplane.testing.builders import PodBuilder, make_claim, make_pod
from draplane.testing.httpserver import HttpServer
from draplane.testing.rbacbuilders import make_role, make_role_binding

LOG = "/api/v1/namespaces/default/pods/{}/log"
STARTED, FINISHED = "2026-01-01T00:00:05Z", "2026-01-01T00:00:35Z"


def running(name: str, restart: int = 0, last: Obj | None = None) -> Obj:
    return {
        "name": name,
        "image": "busybox:1.36",
        "imageID": "busybox@sha256:0",
        "containerID": f"containerd://{name}-{restart}",
        "ready": True,
        "started": True,
        "restartCount": restart,
        "state": {"running": {"startedAt": FINISHED if restart else STARTED}},
        "lastState": {"terminated": last} if last else {},
    }


def terminated(name: str, code: int = 0) -> Obj:
    return {
        "exitCode": code,
        "reason": "Completed" if code == 0 else "Error",
        "startedAt": STARTED,
        "finishedAt": FINISHED,
        "containerID": f"containerd://{name}-0",
    }


def web_pod(*statuses: Obj, name: str = "web") -> PodBuilder:
    app = {
        "name": "app",
        "image": "busybox:1.36",
        "env": [
            {"name": "GREETING", "value": "hello $(CFG_USER_NAME), not $(NOBODY)"},
            {
                "name": "LEVEL",
                "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "level"}},
            },
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        ],
        "envFrom": [{"configMapRef": {"name": "settings"}, "prefix": "CFG_"}],
    }
    return (
        make_pod(name)
        .node("node-0")
        .set("spec.containers", [app])
        .claim_ref("gpu", "gpu-claim")
        .phase("Running")
        .set("status.containerStatuses", list(statuses))
    )


def gpu_claim(pod: Obj) -> Obj:
    data = {"EnvVars": {"user_a": "b", "admin_x": "y"}, "NodeName": "node-0", "Devices": ["dev-3"]}
    return (
        make_claim("gpu-claim")
        .allocation(node="node-0", data=orjson.dumps(data).decode())
        .reserved_for(pod)
        .obj()
    )


async def seed(server: HttpServer, pod: Obj) -> None:
    settings = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "default"},
        "data": {"level": "3", "USER_NAME": "ada"},
    }
    await seed_objects(server.client(), settings, pod, gpu_claim(pod))


async def get_log(
    http: aiohttp.ClientSession, query: str = "", pod: str = "web"
) -> tuple[int, str]:
    async with http.get(LOG.format(pod) + query) as resp:
        return resp.status, (await resp.read()).decode()


async def test_log_says_what_the_container_sees(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    await seed(server, web_pod(running("app")).obj())

    async with http.get(LOG.format("web")) as resp:
        body = (await resp.read()).decode()
        assert resp.headers["Content-Type"].startswith("text/plain")

    assert resp.status == 200
    assert body.splitlines() == [
        "draplane: container app (image busybox:1.36) started on node node-0",
        "HOSTNAME=web",
        "CFG_level=3",
        "CFG_USER_NAME=ada",
        "GREETING=hello ada, not $(NOBODY)",
        "LEVEL=3",
        "POD_NAME=web",
        "user_a=b",
        "admin_x=y",
        "draplane: claim gpu-claim: device dev-3 of driver driver.example.com",
    ]


@dataclass(frozen=True)
class Case:
    statuses: tuple[Obj, ...]
    query: str
    lines: list[str]


EXIT_LINE = "draplane: container app exited with code {} ({})"
CASES = [
    pytest.param(
        Case(
            (running("app"),),
            "?tailLines=2",
            ["admin_x=y", "draplane: claim gpu-claim: device dev-3 of driver driver.example.com"],
        ),
        id="tail",
    ),
    pytest.param(Case((running("app"),), "?tailLines=0", []), id="tail-0"),
    pytest.param(
        Case(
            (running("app"),),
            "?tailLines=1&timestamps=true",
            [
                "2026-01-01T00:00:05.000000000Z draplane: claim gpu-claim: device dev-3 of driver "
                "driver.example.com"
            ],
        ),
        id="timestamps",
    ),
    pytest.param(
        Case((running("app"),), "?limitBytes=18", ["draplane: containe"]), id="limit-bytes"
    ),
    pytest.param(
        Case(
            ({**running("app"), "state": {"terminated": terminated("app", 2)}},),
            "?tailLines=1",
            [EXIT_LINE.format(2, "Error")],
        ),
        id="terminated",
    ),
    pytest.param(
        Case(
            (running("app", 1, terminated("app", 1)),),
            "?previous=true&tailLines=1",
            [EXIT_LINE.format(1, "Error")],
        ),
        id="previous",
    ),
    pytest.param(
        Case((running("app"),), "?sinceTime=2026-01-01T00:00:06Z", []),
        id="since-time-after-the-start",
    ),
    pytest.param(
        Case(
            (running("app"),),
            "?sinceTime=2026-01-01T00:00:05Z&tailLines=1",
            ["draplane: claim gpu-claim: device dev-3 of driver driver.example.com"],
        ),
        id="since-time-at-the-start",
    ),
    pytest.param(
        Case(
            (
                {
                    **running("app"),
                    "restartCount": 1,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                    "lastState": {"terminated": terminated("app", 1)},
                },
            ),
            "?tailLines=1",
            [EXIT_LINE.format(1, "Error")],
        ),
        id="crash-loop-shows-the-last-run",
    ),
]


@pytest.mark.parametrize("case", CASES)
async def test_log_options(server: HttpServer, http: aiohttp.ClientSession, case: Case) -> None:
    await seed(server, web_pod(*case.statuses).obj())

    status, body = await get_log(http, case.query)

    assert (status, body.splitlines()) == (200, case.lines)


@dataclass(frozen=True)
class Refused:
    pod: PodBuilder
    query: str
    code: int
    message: str


waiting = {
    **running("app"),
    "containerID": "",
    "ready": False,
    "started": False,
    "state": {"waiting": {"reason": "ContainerCreating"}},
}
REFUSED = [
    pytest.param(
        Refused(
            web_pod(running("app")).container("sidecar").init_container("setup"),
            "",
            400,
            "a container name must be specified for pod web, choose one of: [app sidecar] or one "
            "of the init containers: [setup]",
        ),
        id="several-containers",
    ),
    pytest.param(
        Refused(
            web_pod(running("app")),
            "?container=nope",
            400,
            "container nope is not valid for pod web",
        ),
        id="unknown-container",
    ),
    pytest.param(
        Refused(
            web_pod(waiting),
            "",
            400,
            'container "app" in pod "web" is waiting to start: ContainerCreating',
        ),
        id="waiting",
    ),
    pytest.param(
        Refused(
            web_pod(running("app")),
            "?previous=true",
            400,
            'previous terminated container "app" in pod "web" not found',
        ),
        id="no-previous",
    ),
    pytest.param(
        Refused(
            web_pod(running("app")),
            "?tailLines=-1",
            422,
            'PodLogOptions "web" is invalid: tailLines: Invalid value: -1: must be greater than '
            "or equal to 0",
        ),
        id="negative-tail",
    ),
    pytest.param(
        Refused(
            web_pod(running("app")),
            "?limitBytes=0",
            422,
            'PodLogOptions "web" is invalid: limitBytes: Invalid value: 0: must be greater than 0',
        ),
        id="zero-limit",
    ),
    pytest.param(
        Refused(
            web_pod(running("app")),
            "?sinceSeconds=5&sinceTime=2026-01-01T00:00:00Z",
            422,
            'PodLogOptions "web" is invalid: : Forbidden: at most one of `sinceTime` or '
            "`sinceSeconds` may be specified",
        ),
        id="since-twice",
    ),
    pytest.param(
        Refused(
            web_pod(running("app")),
            "?tailLines=ten",
            400,
            "invalid integer value for tailLines: 'ten'",
        ),
        id="malformed-tail",
    ),
]


@pytest.mark.parametrize("case", REFUSED)
async def test_log_refused(server: HttpServer, http: aiohttp.ClientSession, case: Refused) -> None:
    await seed(server, case.pod.obj())

    async with http.get(LOG.format("web") + case.query) as resp:
        body = orjson.loads(await resp.read())

    assert (resp.status, body["kind"], body["code"]) == (case.code, "Status", case.code)
    assert body["message"] == case.message


async def test_unscheduled_pod_has_an_empty_log_and_a_missing_one_is_404(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    await server.client().create(kinds.PODS, make_pod("pending").obj(), "default")

    assert await get_log(http, pod="pending") == (200, "")
    status, body = await get_log(http, pod="nope")
    assert status == 404
    assert orjson.loads(body)["message"] == 'pods "nope" not found'


async def test_follow_streams_until_the_container_terminates(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    await seed(server, web_pod(running("app")).obj())
    client = server.client()

    async with http.get(LOG.format("web") + "?follow=true&tailLines=1") as resp:
        first = await resp.content.readline()
        pod = await client.get(kinds.PODS, "web", "default")
        pod["status"]["containerStatuses"][0]["state"] = {"terminated": terminated("app", 0)}
        await client.update(kinds.PODS, pod, subresource="status")
        rest = await asyncio.wait_for(resp.content.read(), timeout=10)

    assert (
        first.decode() == "draplane: claim gpu-claim: device dev-3 of driver driver.example.com\n"
    )
    assert rest.decode() == EXIT_LINE.format(0, "Completed") + "\n"


async def test_follow_ends_when_the_pod_goes_away(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    await seed(server, web_pod(running("app")).obj())

    async with http.get(LOG.format("web") + "?follow=true&tailLines=0") as resp:
        await server.client().delete(kinds.PODS, "web", "default", grace_period_seconds=0)
        rest = await asyncio.wait_for(resp.content.read(), timeout=10)

    assert (resp.status, rest) == (200, b"")


async def test_pods_log_is_authorized_as_its_own_subresource(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    await seed(server, web_pod(running("app")).obj())
    admin = server.client()
    await admin.create(
        kinds.ROLES, make_role("log-reader").rule(["get"], [""], ["pods/log"]).obj(), "default"
    )
    await admin.create(
        kinds.ROLE_BINDINGS,
        make_role_binding("log-reader").role("Role", "log-reader").user("reader").obj(),
        "default",
    )
    reader = {"Authorization": f"Bearer {server.token('reader')}"}
    stranger = {"Authorization": f"Bearer {server.token('stranger')}"}

    async with http.get(LOG.format("web") + "?tailLines=1", headers=reader) as resp:
        allowed = resp.status, (await resp.read()).decode()
    async with http.get(LOG.format("web"), headers=stranger) as resp:
        refused = resp.status, orjson.loads(await resp.read())["message"]

    assert allowed == (
        200,
        "draplane: claim gpu-claim: device dev-3 of driver driver.example.com\n",
    )
    assert refused == (
        403,
        'pods "web" is forbidden: User "stranger" cannot get resource "pods/log" in API group "" '
        'in the namespace "default"',
    )
    assert meta.name(await admin.get(kinds.PODS, "web", "default")) == "web"
