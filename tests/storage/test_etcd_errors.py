"""gRPC failures of etcd requests as Kubernetes Status errors: unreachable or leaderless etcd is
503, a request that ran out of time (the client's deadline, or the server's own when a member has
lost its quorum) is 504, anything else 500."""

from __future__ import annotations

import grpc
import pytest
from grpc.aio import AioRpcError, Metadata

from draplane.storage.etcd_rpc import to_status


@pytest.mark.parametrize(
    ("code", "details", "status"),
    [
        pytest.param(grpc.StatusCode.UNAVAILABLE, "connection refused", 503, id="unreachable"),
        pytest.param(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded", 504, id="deadline"),
        pytest.param(grpc.StatusCode.UNKNOWN, "context deadline exceeded", 504, id="no-quorum"),
        pytest.param(
            grpc.StatusCode.UNKNOWN, "etcdserver: request timed out", 504, id="proposal-timeout"
        ),
        pytest.param(grpc.StatusCode.UNKNOWN, "etcdserver: no leader", 503, id="no-leader"),
        pytest.param(grpc.StatusCode.UNKNOWN, "something else", 500, id="other"),
    ],
)
def test_rpc_errors_as_status(code: grpc.StatusCode, details: str, status: int) -> None:
    err = AioRpcError(code, Metadata(), Metadata(), details=details)
    assert to_status(err).code == status
