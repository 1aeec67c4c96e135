"""Periodic compaction of etcd, as kube-apiserver compacts (`--etcd-compaction-interval`,
default 5m, 0 disables): every interval, compact to the revision seen one interval earlier.

API servers sharing one etcd take turns through the `compact_rev_key` key: each interval, a
transaction increments its version only if it is still the version this server saw last; the
one that succeeds compacts to the revision it recorded one interval before. The others adopt the
winner's version and record the current revision.

The compactor sees its store through the narrow `CompactedStore` (the stubs, the request timeout
and the compacted revision it raises); `EtcdStorage` satisfies it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, Protocol

from draplane.storage import etcd_rpc as rpc

log = logging.getLogger(__name__)

COMPACT_REV_KEY = b"compact_rev_key"
DEFAULT_INTERVAL = 300.0


class CompactedStore(Protocol):
    """What the compactor uses of its store."""

    @property
    def stubs(self) -> rpc.Stubs: ...

    @property
    def config(self) -> rpc.EtcdConfig: ...

    compacted: int
    """The newest revision the store knows etcd has compacted to (the compactor raises it)."""


class Compactor:
    def __init__(self, store: CompactedStore, interval: float = DEFAULT_INTERVAL) -> None:
        self._store = store
        self.interval = interval
        self._version = 0
        """The version of compact_rev_key this server saw last."""
        self._revision = 0
        """The etcd revision recorded at the last interval (compacted to at the next)."""
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self.interval > 0 and self._task is None:
            self._task = asyncio.create_task(self._loop(), name="etcd-compactor")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.compact_once()
            except Exception as exc:  # etcd unavailable: try again next interval
                log.warning("etcd compaction failed: %s", exc)

    async def compact_once(self) -> int:
        """One interval's step; returns the revision compacted to (0 when none)."""
        stubs = self._store.stubs
        timeout = self._store.config.request_timeout
        version = rpc.pb.Compare(
            key=COMPACT_REV_KEY,
            target=rpc.pb.Compare.VERSION,
            result=rpc.pb.Compare.EQUAL,
            version=self._version,
        )
        request = rpc.pb.TxnRequest(
            compare=[version],
            success=[rpc.put_op(COMPACT_REV_KEY, str(self._revision).encode())],
            failure=[rpc.get_op(COMPACT_REV_KEY)],
        )
        resp: Any = await stubs.kv.Txn(request, timeout=timeout)
        current = resp.header.revision
        if not resp.succeeded:
            self._version = resp.responses[0].response_range.kvs[0].version
            self._revision = current
            return 0
        self._version += 1
        target, self._revision = self._revision, current
        if target == 0:  # nothing recorded yet (the first interval)
            return 0
        try:
            await stubs.kv.Compact(rpc.pb.CompactionRequest(revision=target), timeout=timeout)
        except Exception as exc:
            if not rpc.is_compacted(exc):
                raise
        self._store.compacted = max(self._store.compacted, target)
        log.info("compacted etcd to revision %d", target)
        return target
