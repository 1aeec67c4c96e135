"""Request logging: one V6 line per request with its outcome; nothing when V6 is off."""

from __future__ import annotations

import logging
import re

import pytest

from draplane.api import errors
from draplane.api.kinds import PODS
from draplane.client.requestlog import RequestLoggingTransport, logged
from draplane.klog import V6
from draplane.testing.builders import make_pod
from draplane.testing.cluster import Cluster


async def test_each_request_is_logged_with_its_outcome(
    cluster: Cluster, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(V6, logger="draplane.client.requests")
    client = logged(cluster.client())
    assert isinstance(client.transport, RequestLoggingTransport)
    pod = make_pod("p").obj()
    del pod["metadata"]["uid"]
    await client.create(PODS, pod, "default")
    await client.patch(PODS, "p", {"metadata": {"labels": {"a": "b"}}}, "default")
    await client.list(PODS, "default")
    with pytest.raises(errors.StatusError):
        await client.get(PODS, "missing", "default")
    await client.delete(PODS, "p", "default")
    records = [r for r in caplog.records if r.name == "draplane.client.requests"]
    lines = [re.sub(r"in [\d.]+ ms$", "in T", r.getMessage()) for r in records]
    assert lines == [
        "POST /api/v1/namespaces/default/pods 200 OK in T",
        "PATCH /api/v1/namespaces/default/pods/p 200 OK in T",
        "LIST /api/v1/namespaces/default/pods 200 OK in T",
        "GET /api/v1/namespaces/default/pods/missing 404 NotFound in T",
        "DELETE /api/v1/namespaces/default/pods/p 200 OK in T",
    ]
    assert {r.levelno for r in records} == {V6}


async def test_not_wrapped_below_v6(cluster: Cluster, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="draplane.client.requests")
    client = cluster.client()
    assert logged(client) is client
