"""The etcd v3 gRPC API as the etcd store uses it: a channel to `--etcd-servers` (TLS with
`--etcd-cafile/--etcd-certfile/--etcd-keyfile` for https URLs), the KV, Watch and Maintenance
stubs, request builders, and the mapping of gRPC failures to Kubernetes Status errors (503 while
etcd cannot be reached, 504 when a request times out).

The messages are etcd's own protos (`etcdserverpb`, `mvccpb`) as generated in the `aetcd` package.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import grpc
import grpc.aio
from aetcd.rpc import kv_pb2, rpc_pb2, rpc_pb2_grpc

from draplane.api import errors

pb: Any = rpc_pb2
mvcc: Any = kv_pb2

COMPACTED = "required revision has been compacted"
FUTURE_REVISION = "required revision is a future revision"


@dataclass(frozen=True)
class EtcdConfig:
    """How to reach etcd, as kube-apiserver's `--etcd-*` flags say it."""

    servers: tuple[str, ...]
    prefix: str = "/registry"
    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""
    request_timeout: float = 10.0
    """Per request: a request etcd does not answer in time fails 504."""

    @classmethod
    def from_flags(
        cls,
        servers: str,
        *,
        prefix: str = "/registry",
        ca_file: str = "",
        cert_file: str = "",
        key_file: str = "",
    ) -> EtcdConfig:
        urls = tuple(s.strip() for s in servers.split(",") if s.strip())
        if not urls:
            raise ValueError("--etcd-servers: at least one URL is required")
        for url in urls:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname or not parts.port:
                raise ValueError(f"--etcd-servers: {url!r} is not http(s)://host:port")
        return cls(urls, prefix or "/registry", ca_file, cert_file, key_file)


def _target(servers: tuple[str, ...]) -> str:
    hosts = [urlsplit(u) for u in servers]
    try:
        for h in hosts:
            ipaddress.IPv4Address(h.hostname)
    except ValueError:
        # Names: the first server (gRPC's dns resolver finds its addresses).
        return f"{hosts[0].hostname}:{hosts[0].port}"
    return "ipv4:" + ",".join(f"{h.hostname}:{h.port}" for h in hosts)


def open_channel(config: EtcdConfig) -> Any:
    options = [
        ("grpc.keepalive_time_ms", 10_000),
        ("grpc.keepalive_timeout_ms", 5_000),
        ("grpc.max_receive_message_length", 256 * 1024 * 1024),
        ("grpc.initial_reconnect_backoff_ms", 100),
        ("grpc.max_reconnect_backoff_ms", 1_000),
    ]
    target = _target(config.servers)
    if not any(u.startswith("https://") for u in config.servers):
        return grpc.aio.insecure_channel(target, options=options)

    def read(path: str) -> bytes | None:
        if not path:
            return None
        with open(path, "rb") as f:
            return f.read()

    creds = grpc.ssl_channel_credentials(
        root_certificates=read(config.ca_file),
        private_key=read(config.key_file),
        certificate_chain=read(config.cert_file),
    )
    return grpc.aio.secure_channel(target, creds, options=options)


class Stubs:
    def __init__(self, channel: Any) -> None:
        self.channel = channel
        self.kv = rpc_pb2_grpc.KVStub(channel)
        self.watch = rpc_pb2_grpc.WatchStub(channel)
        self.maintenance = rpc_pb2_grpc.MaintenanceStub(channel)


def is_rpc_error(exc: BaseException) -> bool:
    return isinstance(exc, grpc.aio.AioRpcError)


def is_compacted(exc: BaseException) -> bool:
    return isinstance(exc, grpc.aio.AioRpcError) and COMPACTED in (exc.details() or "")


_TIMED_OUT = ("context deadline exceeded", "request timed out")
_NO_LEADER = ("no leader", "leader changed")


def unavailable(detail: str) -> errors.StatusError:
    return errors.StatusError(503, "ServiceUnavailable", f"etcd is unavailable: {detail}")


def to_status(exc: BaseException) -> errors.StatusError:
    """The Status error for a failed etcd request."""
    if isinstance(exc, TimeoutError):
        return errors.server_timeout("etcd request timed out")
    if isinstance(exc, grpc.aio.AioRpcError):
        code = exc.code()
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            return errors.server_timeout(f"etcd request timed out: {exc.details()}")
        if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
            return errors.StatusError(507, "InsufficientStorage", f"etcd: {exc.details()}")
        if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
            return unavailable(exc.details() or code.name)
        details = exc.details() or ""
        # A member without quorum: the server's own deadline ends the proposal (code Unknown).
        if any(text in details for text in _TIMED_OUT):
            return errors.server_timeout(f"etcd request timed out: {details}")
        if any(text in details for text in _NO_LEADER):
            return unavailable(details)
        return errors.internal(f"etcd: {exc.details() or code.name}")
    return errors.internal(f"etcd: {exc}")


def compare_mod(key: bytes, revision: int) -> Any:
    return pb.Compare(
        key=key, target=pb.Compare.MOD, result=pb.Compare.EQUAL, mod_revision=revision
    )


def compare_exists(key: bytes, exists: bool) -> Any:
    result = pb.Compare.GREATER if exists else pb.Compare.EQUAL
    return pb.Compare(key=key, target=pb.Compare.CREATE, result=result, create_revision=0)


def put_op(key: bytes, value: bytes) -> Any:
    return pb.RequestOp(request_put=pb.PutRequest(key=key, value=value))


def delete_op(key: bytes) -> Any:
    return pb.RequestOp(request_delete_range=pb.DeleteRangeRequest(key=key, prev_kv=True))


def get_op(key: bytes) -> Any:
    return pb.RequestOp(request_range=pb.RangeRequest(key=key))


def txn(compare: Any, success: Any, failure: Any) -> Any:
    return pb.TxnRequest(compare=[compare], success=[success], failure=[failure])
