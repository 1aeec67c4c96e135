"""Shared by the events.k8s.io/v1 tests: Events as kube-scheduler's broadcaster and a kubelet
write them, raw HTTP calls, and both modes' servers."""

from __future__ import annotations

from typing import Any

import aiohttp
import orjson

from draplane.api import kinds
from draplane.api.meta import Obj
from draplane.api.request import resource_path

EV1, CORE = kinds.EVENTS_V1, kinds.EVENTS
NOW = "2026-12-08T00:00:00.000000Z"
LATER = "2026-12-08T00:05:00.000000Z"
STRATEGIC = "application/strategic-merge-patch+json"


def event_v1(name: str = "e", **fields: Any) -> Obj:
    """An events.k8s.io/v1 Event as kube-scheduler's broadcaster writes it."""
    event: Obj = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "eventTime": NOW,
        "reportingController": "default-scheduler",
        "reportingInstance": "default-scheduler-node-0",
        "action": "Scheduling",
        "reason": "Scheduled",
        "regarding": {"kind": "Pod", "namespace": "default", "name": "web", "uid": "u1"},
        "note": "Successfully assigned default/web to node-0",
        "type": "Normal",
    }
    event.update(fields)
    return {k: v for k, v in event.items() if v is not None}


def core_event(name: str = "c", **fields: Any) -> Obj:
    event: Obj = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "involvedObject": {"kind": "Node", "name": "node-0"},
        "reason": "Starting",
        "message": "Starting kubelet.",
        "source": {"component": "kubelet", "host": "node-0"},
        "firstTimestamp": "2026-12-08T00:00:00Z",
        "lastTimestamp": "2026-12-08T00:01:00Z",
        "count": 3,
        "type": "Normal",
    }
    event.update(fields)
    return event


async def call(
    http: aiohttp.ClientSession,
    method: str,
    path: str,
    body: Any = None,
    content_type: str = "application/json",
    **params: str,
) -> tuple[int, Any]:
    data = None if body is None else orjson.dumps(body)
    headers = {"Content-Type": content_type} if body is not None else {}
    async with http.request(method, path, data=data, headers=headers, params=params) as resp:
        return resp.status, orjson.loads(await resp.read())


def path(rt: kinds.ResourceType, name: str = "") -> str:
    return resource_path(rt, "default", name)
