"""Hostile-input testing against a real API server: send a request, check the invariants.

`Hostile.check(method, path, body=..., headers=...)` sends one request and asserts what every
request to the API server must satisfy: no 5xx (but the 504 for a resourceVersion from the
future, as upstream), nothing logged at ERROR (no traceback), and a rejected write leaves
storage as it was (same revision). `seed(server)` creates namespace
`fuzz` and `seed_objects()`, one valid object per kind with most fields set.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson
from hypothesis import HealthCheck, settings

from draplane.api import kinds
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.testing.builders import (
    make_claim,
    make_class,
    make_node,
    make_pod,
    make_pod_disruption_budget,
    make_replication_controller,
    make_scheduling_context,
    make_template,
)
from draplane.testing.httpserver import HttpServer
from draplane.testing.quotabuilders import make_limit_range, make_resource_quota
from draplane.testing.storagebuilders import (
    make_csi_driver,
    make_csi_node,
    make_csi_storage_capacity,
    make_persistent_volume,
    make_persistent_volume_claim,
    make_storage_class,
    make_volume_attachment,
)

LONG = os.environ.get("DRAPLANE_FUZZ", "") == "long"
"""`DRAPLANE_FUZZ=long` (`make fuzz`): many random examples; default: few, derandomized."""


def fuzz_settings(short: int, long: int = 0) -> Any:
    """Hypothesis settings for one fuzz test: `short` examples by default, `long` on demand."""
    return settings(
        max_examples=(long or short * 40) if LONG else short,
        derandomize=not LONG,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


@dataclass(frozen=True)
class Response:
    status: int
    body: Obj


def _parse(raw: bytes) -> Obj:
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _too_large_resource_version(response: Response) -> bool:
    """The one 5xx kube-apiserver answers to a client's input: 504 for a resourceVersion the
    server has not reached yet (the client may retry)."""
    causes = (response.body.get("details") or {}).get("causes") or [{}]
    return response.status == 504 and causes[0].get("reason") == "ResourceVersionTooLarge"


class Hostile:
    """Sends requests to one seeded server and checks the invariants (module docstring)."""

    def __init__(
        self, server: HttpServer, http: aiohttp.ClientSession, seeds: dict[ResourceType, Obj]
    ) -> None:
        self.server = server
        self.http = http
        self.seeds = seeds
        self.records: Callable[[], list[logging.LogRecord]] = list
        """The log records of the current test (pytest's `caplog.records`)."""
        self.clear_records: Callable[[], None] = lambda: None

    @staticmethod
    def path(rt: ResourceType, name: str, subresource: str = "", namespace: str = "fuzz") -> str:
        return item_path(rt, name, subresource, namespace)

    async def send(
        self, method: str, path: str, *, body: Any = None, headers: dict[str, str] | None = None
    ) -> Response:
        """`body`: bytes as they are, anything else as JSON."""
        data = body if isinstance(body, bytes) or body is None else orjson.dumps(body)
        async with self.http.request(
            method, path, data=data, headers=headers or {}, skip_auto_headers=("Content-Type",)
        ) as resp:
            if resp.status == 200 and "watch" in path:
                # A watch that started streams until its timeout: the headers are the answer.
                return Response(resp.status, {})
            return Response(resp.status, _parse(await resp.read()))

    async def check(
        self, method: str, path: str, *, body: Any = None, headers: dict[str, str] | None = None
    ) -> Response:
        self.clear_records()
        revision = self.server.storage.revision
        response = await self.send(method, path, body=body, headers=headers)
        where = (method, path, headers, body if not isinstance(body, bytes) else body[:200])
        assert response.status < 500 or _too_large_resource_version(response), (where, response)
        logged = [r for r in self.records() if r.levelno >= logging.ERROR or r.exc_info]
        assert not logged, (where, [r.getMessage() for r in logged])
        if response.status >= 400 and method != "GET":
            assert self.server.storage.revision == revision, ("rejected write stored", where)
        return response


def item_path(rt: ResourceType, name: str, subresource: str = "", namespace: str = "fuzz") -> str:
    base = "/api/v1" if not rt.group else f"/apis/{rt.group}/{rt.version}"
    ns = f"/namespaces/{namespace}" if rt.namespaced else ""
    path = f"{base}{ns}/{rt.resource}"
    if name:
        path += f"/{name}"
    return f"{path}/{subresource}" if subresource else path


_TIME = "2026-01-01T00:00:00Z"
_SELECTOR = {
    "nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
    ]
}


def seed_objects() -> dict[ResourceType, Obj]:
    """One valid object per served kind, with most fields set (namespace `fuzz`)."""
    pod = (
        make_pod("fuzz-pod", "fuzz")
        .label("app", "fuzz")
        .annotation("note", "x")
        .requests(cpu="100m")
        .claim_template("gpu", "fuzz-template")
        .condition("Ready", "True")
        .obj()
    )
    pod["spec"]["tolerations"] = [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]
    pod["spec"]["affinity"] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": _SELECTOR}
    }
    pod["status"].update(
        phase="Running",
        podIP="10.0.0.1",
        containerStatuses=[
            {
                "name": "ctr",
                "ready": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": _TIME}},
            }
        ],
        resourceClaimStatuses=[{"name": "gpu", "resourceClaimName": "fuzz-pod-gpu"}],
    )
    node = make_node("fuzz-node").capacity(cpu="4").taint("k", "NoSchedule", "v").obj()
    node["status"].update(
        conditions=[{"type": "Ready", "status": "True", "lastHeartbeatTime": _TIME}],
        addresses=[{"type": "InternalIP", "address": "10.0.0.2"}],
        nodeInfo={"kubeletVersion": "v1.28.0"},
    )
    claim = make_claim("fuzz-claim", "fuzz").resource_class("fuzz-class").obj()
    claim["status"] = {
        "driverName": "driver.example.com",
        "allocation": {"resourceHandles": [{"driverName": "driver.example.com", "data": "d"}]},
        "reservedFor": [{"resource": "pods", "name": "fuzz-pod", "uid": "u1"}],
    }
    psc = make_scheduling_context(pod).obj()
    psc["spec"].update(selectedNode="fuzz-node", potentialNodes=["fuzz-node"])
    psc["status"] = {"resourceClaims": [{"name": "gpu", "unsuitableNodes": ["n2"]}]}
    cls = make_class("fuzz-class").obj()
    cls["suitableNodes"] = _SELECTOR
    return {
        kinds.NAMESPACES: {
            "metadata": {"name": "fuzz-extra"},
            "spec": {"finalizers": ["kubernetes"]},
        },
        kinds.PODS: pod,
        kinds.NODES: node,
        kinds.EVENTS: {
            "metadata": {"name": "fuzz-event", "namespace": "fuzz"},
            "involvedObject": {"kind": "Pod", "name": "fuzz-pod", "namespace": "fuzz"},
            "reason": "Fuzzed",
            "message": "m",
            "type": "Normal",
            "count": 2,
            "firstTimestamp": _TIME,
            "source": {"component": "fuzz"},
        },
        kinds.EVENTS_V1: {
            "metadata": {"name": "fuzz-event-v1", "namespace": "fuzz"},
            "eventTime": "2026-01-01T00:00:00.000000Z",
            "series": {"count": 2, "lastObservedTime": "2026-01-01T00:01:00.000000Z"},
            "reportingController": "example.com/fuzz",
            "reportingInstance": "fuzz-0",
            "action": "Fuzzing",
            "reason": "Fuzzed",
            "regarding": {"kind": "Pod", "name": "fuzz-pod", "namespace": "fuzz"},
            "note": "m",
            "type": "Normal",
        },
        kinds.CONFIGMAPS: {
            "metadata": {"name": "fuzz-cm", "namespace": "fuzz"},
            "data": {"a": "1"},
            "binaryData": {"b": "AA=="},
        },
        kinds.LEASES: {
            "metadata": {"name": "fuzz-lease", "namespace": "fuzz"},
            "spec": {"holderIdentity": "h", "leaseDurationSeconds": 10, "renewTime": _TIME},
        },
        kinds.RESOURCE_CLASSES: cls,
        kinds.RESOURCE_CLAIMS: claim,
        kinds.RESOURCE_CLAIM_TEMPLATES: make_template("fuzz-template", "fuzz").obj(),
        kinds.POD_SCHEDULING_CONTEXTS: psc,
        **_access_objects(),
        **_volume_objects(),
    }


def _volume_objects() -> dict[ResourceType, Obj]:
    """The volume kinds, a ReplicationController, a PodDisruptionBudget, a ResourceQuota and a
    LimitRange (namespace `fuzz`)."""
    return {
        kinds.PERSISTENT_VOLUMES: make_persistent_volume("fuzz-pv")
        .claim_ref("fuzz", "fuzz-pvc")
        .node_affinity("zone", "a")
        .set("status", {"phase": "Bound"})
        .obj(),
        kinds.PERSISTENT_VOLUME_CLAIMS: make_persistent_volume_claim("fuzz-pvc", "fuzz")
        .storage_class_name("fuzz-class")
        .volume_name("fuzz-pv")
        .set("status", {"phase": "Bound", "capacity": {"storage": "1Gi"}})
        .obj(),
        kinds.REPLICATION_CONTROLLERS: make_replication_controller("fuzz-rc", "fuzz")
        .status(replicas=1, readyReplicas=1)
        .obj(),
        kinds.STORAGE_CLASSES: make_storage_class("fuzz-class").parameters(type="ssd").obj(),
        kinds.CSI_DRIVERS: make_csi_driver("fuzz.csi.example.com").obj(),
        kinds.CSI_NODES: make_csi_node("fuzz-node").obj(),
        kinds.CSI_STORAGE_CAPACITIES: make_csi_storage_capacity("fuzz-capacity", "fuzz").obj(),
        kinds.VOLUME_ATTACHMENTS: make_volume_attachment("fuzz-attachment")
        .set("status", {"attached": True})
        .obj(),
        kinds.POD_DISRUPTION_BUDGETS: make_pod_disruption_budget("fuzz-pdb", "fuzz")
        .status(disruptionsAllowed=1, currentHealthy=1, desiredHealthy=1, expectedPods=1)
        .obj(),
        kinds.RESOURCE_QUOTAS: make_resource_quota("fuzz-quota", "fuzz")
        .hard("pods", "100")
        .hard("requests.cpu", "64")
        .scope("PriorityClass", "In", "high")
        .status({"pods": "100"}, {"pods": "1"})
        .obj(),
        kinds.LIMIT_RANGES: make_limit_range("fuzz-limits", "fuzz")
        .limit("Container", max={"cpu": "2"}, min={"cpu": "100m"}, default={"cpu": "1"})
        .obj(),
    }


def _access_objects() -> dict[ResourceType, Obj]:
    """Service accounts, RBAC and the review APIs (create-only, never stored)."""
    rules = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]
    subjects = [{"kind": "User", "name": "fuzz-user", "apiGroup": "rbac.authorization.k8s.io"}]
    attributes = {"verb": "get", "resource": "pods", "namespace": "fuzz"}

    def md(name: str, namespaced: bool = True) -> Obj:
        return {"name": name, "namespace": "fuzz"} if namespaced else {"name": name}

    def ref(kind: str, name: str) -> Obj:
        return {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name}

    by_resource: dict[str, Obj] = {
        "serviceaccounts": {"metadata": md("fuzz-sa")},
        "roles": {"metadata": md("fuzz-role"), "rules": rules},
        "clusterroles": {"metadata": md("fuzz-clusterrole", False), "rules": rules},
        "rolebindings": {
            "metadata": md("fuzz-rolebinding"),
            "roleRef": ref("Role", "fuzz-role"),
            "subjects": subjects,
        },
        "clusterrolebindings": {
            "metadata": md("fuzz-clusterrolebinding", False),
            "roleRef": ref("ClusterRole", "fuzz-clusterrole"),
            "subjects": subjects,
        },
        "subjectaccessreviews": {
            "metadata": md("fuzz-review", False),
            "spec": {"user": "fuzz-user", "resourceAttributes": attributes},
        },
        "selfsubjectaccessreviews": {
            "metadata": md("fuzz-review", False),
            "spec": {"resourceAttributes": attributes},
        },
        "localsubjectaccessreviews": {
            "metadata": md("fuzz-review"),
            "spec": {"user": "fuzz-user", "resourceAttributes": attributes},
        },
        "selfsubjectrulesreviews": {
            "metadata": md("fuzz-review", False),
            "spec": {"namespace": "fuzz"},
        },
        "tokenreviews": {"metadata": md("fuzz-review", False), "spec": {"token": "not-a-token"}},
        "selfsubjectreviews": {"metadata": md("fuzz-review", False)},
    }
    return {rt: by_resource[rt.resource] for rt in kinds.SERVED if rt.resource in by_resource}


def create_only(rt: ResourceType) -> bool:
    """A kind that is never stored: only POST is served (the review APIs)."""
    return tuple(rt.verbs) == ("create",)


async def seed(server: HttpServer) -> dict[ResourceType, Obj]:
    """Create namespace `fuzz` and every seed object; returns them as stored."""
    client = server.client()
    await client.create(kinds.NAMESPACES, {"metadata": {"name": "fuzz"}})
    stored: dict[ResourceType, Obj] = {}
    for rt, obj in seed_objects().items():
        created = await client.create(rt, obj, "fuzz" if rt.namespaced else "")
        if create_only(rt):
            stored[rt] = obj
            continue
        if "status" in rt.subresources and rt is not kinds.NAMESPACES:
            created = await client.update(
                rt, {**created, "status": obj["status"]}, subresource="status"
            )
        stored[rt] = created
    return stored
