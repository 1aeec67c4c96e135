"""`EtcdStorage`: the Storage protocol on etcd v3, keys laid out as kube-apiserver lays them out
(`storage.etcd_keys`), etcd's revisions as resourceVersions.

Writes are etcd transactions: create compares create_revision == 0, a guaranteed update or a
delete with a precondition compares mod_revision with the expected revision, an unconditional one
that the key exists; the failure branch reads the key to tell NotFound from Conflict. Writes of
one key from this process are applied in call order (a per-key FIFO lock), as the other stores
apply them.

Reads are served from a mirror: the shared in-memory engine, loaded by a range read of the
prefix and kept current by one etcd watch on it (events of other API servers sharing the etcd
arrive the same way). A write returns once the mirror has applied its revision, so a caller
reads its own writes and store watches (the API server's watch cache, hence the RBAC index and
the node graph) see every write in revision order. Reads at an older revision than the mirror's
history (`list_at`, `watch`) go to etcd's MVCC store until it is compacted (410 Expired).

While etcd cannot be reached every request fails 503 (504 when etcd does not answer in time) and
`check()` fails; the mirror's watch reconnects from the last revision it applied. See
`etcd_compaction` for the periodic compaction.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from draplane.api import errors
from draplane.api.meta import Obj
from draplane.storage import etcd_rpc as rpc
from draplane.storage._engine import DEFAULT_HISTORY_BYTES, DEFAULT_HISTORY_SIZE, Engine
from draplane.storage._writes import Key, object_key
from draplane.storage.errors import KeyExists, KeyNotFound, RevisionConflict, RevisionTooOld
from draplane.storage.etcd_compaction import Compactor
from draplane.storage.etcd_keys import KeyLayout, prefix_end
from draplane.storage.etcd_mirror import KeyLocks, relist_events, response_events
from draplane.storage.etcd_watch import EtcdWatch, decode, encode, watch_request, watch_stream
from draplane.storage.interface import Storage, StoreError, Watch

log = logging.getLogger(__name__)

CHECK_NAME = "etcd"
START_TIMEOUT = 60.0
PAGE = 5_000


class EtcdStorage:
    CHECK_NAME = CHECK_NAME

    def __init__(
        self,
        config: rpc.EtcdConfig,
        *,
        history_size: int = DEFAULT_HISTORY_SIZE,
        history_bytes: int = DEFAULT_HISTORY_BYTES,
        compaction_interval: float = 300.0,
        start_timeout: float = START_TIMEOUT,
    ) -> None:
        self.config = config
        self.layout = KeyLayout(config.prefix)
        self._engine = Engine(history_size=history_size, history_bytes=history_bytes)
        self._timeout = config.request_timeout
        self._start_timeout = start_timeout
        self._stubs: rpc.Stubs | None = None
        self._locks = KeyLocks()
        self._synced = 0
        """The etcd revision the mirror is consistent with (its watch resumes after it)."""
        self._floor = 0
        """The mirror's history covers revisions after this one only."""
        self._range_revision = 0
        """The etcd revision of the last `_range` read."""
        self._own: dict[int, Obj] = {}
        self._waiters: dict[int, asyncio.Future[None]] = {}
        self._connected = False
        self._last_error = "not connected yet"
        self._loaded = asyncio.Event()
        self._watching = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self.compacted = 0
        """The newest revision this store knows etcd has compacted to."""
        self.compactor = Compactor(self, compaction_interval)

    @property
    def stubs(self) -> rpc.Stubs:
        if self._stubs is None:
            raise errors.internal("storage is not started")
        return self._stubs

    @property
    def revision(self) -> int:
        return self._engine.revision

    @property
    def oldest_revision(self) -> int:
        return self.compacted + 1

    # -- lifecycle --------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect and load the mirror; StoreError when etcd cannot be reached in time."""
        self._stubs = rpc.Stubs(rpc.open_channel(self.config))
        self._task = asyncio.create_task(self._run(), name="etcd-mirror")
        try:
            async with asyncio.timeout(self._start_timeout):
                await self._loaded.wait()
                await self._watching.wait()
        except TimeoutError:
            await self.close()
            servers = ",".join(self.config.servers)
            raise StoreError(
                f"cannot reach etcd at {servers} within {self._start_timeout:g}s: "
                f"{self._last_error}"
            ) from None
        self.compactor.start()

    async def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        await self.compactor.stop()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._engine.end_watches()
        for future in self._waiters.values():
            if not future.done():
                future.set_exception(rpc.unavailable("storage is closed"))
        if self._stubs is not None:
            await self._stubs.channel.close()

    async def check(self) -> None:
        self._ready()
        await self._call(
            self.stubs.kv.Range(
                rpc.pb.RangeRequest(key=self.layout.root, limit=1, keys_only=True),
                timeout=min(self._timeout, 2.0),
            )
        )

    def _ready(self) -> None:
        if self._closing or self._stubs is None:
            raise errors.internal("storage is closed or not started")
        if not self._connected:
            raise rpc.unavailable(self._last_error)

    async def _call(self, call: Any) -> Any:
        try:
            return await call
        except Exception as exc:
            if not rpc.is_rpc_error(exc):
                raise
            status = rpc.to_status(exc)
            if status.code == 503:
                self._last_error = status.message
            raise status from None

    # -- reads ------------------------------------------------------------------------------

    async def get(self, resource: str, namespace: str, name: str) -> Obj | None:
        self._ready()
        return self._engine.get(resource, namespace, name)

    async def list(self, resource: str, namespace: str | None = None) -> tuple[list[Obj], int]:
        self._ready()
        return self._engine.list(resource, namespace), self._engine.revision

    async def list_at(
        self, resource: str, namespace: str | None, revision: int
    ) -> builtins.list[Obj]:
        self._ready()
        if revision < self.compacted:
            raise RevisionTooOld(revision, self.compacted)
        if revision >= self._engine.revision or (
            revision >= self._floor and revision >= self._engine.oldest_revision - 1
        ):
            return self._engine.list_at(resource, namespace, revision)
        start, end = self.layout.range(resource, namespace)
        kvs = await self._range(start, end, revision)
        objs = []
        for kv in kvs:
            parsed = self.layout.parse(kv.key)
            if parsed is not None and parsed[0] == resource:
                objs.append((parsed[1], parsed[2], decode(kv.value, kv.mod_revision)))
        objs.sort(key=lambda t: (t[0], t[1]))
        return [obj for _, _, obj in objs]

    async def _range(self, start: bytes, end: bytes, revision: int) -> builtins.list[Any]:
        """Every kv in [start, end) at `revision` (0: now), read in pages."""
        out: builtins.list[Any] = []
        while True:
            request = rpc.pb.RangeRequest(key=start, range_end=end, revision=revision, limit=PAGE)
            try:
                resp = await self.stubs.kv.Range(request, timeout=self._timeout)
            except Exception as exc:
                if rpc.is_compacted(exc):
                    raise RevisionTooOld(revision, self.compacted) from None
                if rpc.is_rpc_error(exc):
                    raise rpc.to_status(exc) from None
                raise
            revision = revision or resp.header.revision
            out.extend(resp.kvs)
            if not resp.more or not resp.kvs:
                self._range_revision = resp.header.revision
                return out
            start = resp.kvs[-1].key + b"\0"

    # -- writes -----------------------------------------------------------------------------

    async def create(self, resource: str, obj: Obj) -> Obj:
        key = object_key(resource, obj)
        self._ready()
        value, etcd_key = encode(obj), self.layout.key(*key)
        async with self._locks.hold(key):
            resp = await self._txn(
                rpc.compare_exists(etcd_key, False),
                rpc.put_op(etcd_key, value),
                rpc.get_op(etcd_key),
            )
            if not resp.succeeded:
                await self._caught_up(resp)
                raise KeyExists(*key)
            return await self._committed(resp.header.revision, obj)

    async def update(self, resource: str, obj: Obj, *, expected_rv: int | None = None) -> Obj:
        key = object_key(resource, obj)
        self._ready()
        value, etcd_key = encode(obj), self.layout.key(*key)
        async with self._locks.hold(key):
            resp = await self._txn(
                self._precondition(etcd_key, expected_rv),
                rpc.put_op(etcd_key, value),
                rpc.get_op(etcd_key),
            )
            if not resp.succeeded:
                await self._caught_up(resp)
                self._failed(key, expected_rv, resp)
            return await self._committed(resp.header.revision, obj)

    async def delete(
        self, resource: str, namespace: str, name: str, *, expected_rv: int | None = None
    ) -> Obj:
        key = (resource, namespace, name)
        self._ready()
        etcd_key = self.layout.key(*key)
        async with self._locks.hold(key):
            resp = await self._txn(
                self._precondition(etcd_key, expected_rv),
                rpc.delete_op(etcd_key),
                rpc.get_op(etcd_key),
            )
            if not resp.succeeded:
                await self._caught_up(resp)
                self._failed(key, expected_rv, resp)
            prev_kvs = resp.responses[0].response_delete_range.prev_kvs
            revision = resp.header.revision
            if not prev_kvs:  # deleted by someone else in between
                raise KeyNotFound(*key)
            await self._wait_applied(revision)
            return decode(prev_kvs[0].value, revision)

    @staticmethod
    def _precondition(etcd_key: bytes, expected_rv: int | None) -> Any:
        if expected_rv is None:
            return rpc.compare_exists(etcd_key, True)
        return rpc.compare_mod(etcd_key, expected_rv)

    @staticmethod
    def _failed(key: Key, expected_rv: int | None, resp: Any) -> None:
        kvs = resp.responses[0].response_range.kvs
        if not kvs:
            raise KeyNotFound(*key)
        raise RevisionConflict(*key, expected_rv or 0, kvs[0].mod_revision)

    async def _txn(self, compare: Any, success: Any, failure: Any) -> Any:
        request = rpc.txn(compare, success, failure)
        return await self._call(self.stubs.kv.Txn(request, timeout=self._timeout))

    async def _committed(self, revision: int, obj: Obj) -> Obj:
        obj["metadata"]["resourceVersion"] = str(revision)
        if self._engine.revision < revision:
            self._own[revision] = obj
        try:
            await self._wait_applied(revision)
        finally:
            self._own.pop(revision, None)
        return obj

    async def _caught_up(self, resp: Any) -> None:
        """Before a failed precondition is reported: let the mirror reach the stored key's
        revision, so that the caller's retry (GuaranteedUpdate) reads what etcd holds."""
        kvs = resp.responses[0].response_range.kvs
        if kvs:
            await self._wait_applied(kvs[0].mod_revision)

    async def _wait_applied(self, revision: int) -> None:
        """Until the mirror has applied `revision` (committed in etcd). If its watch lags more
        than the request timeout, the write still succeeded: it returns, and says so in the log."""
        if self._engine.revision >= revision:
            return
        future = self._waiters.get(revision)
        if future is None:
            future = self._waiters[revision] = asyncio.get_running_loop().create_future()
        try:
            async with asyncio.timeout(self._timeout):
                await asyncio.shield(future)
        except TimeoutError:
            log.warning(
                "etcd's watch has not delivered revision %d after %gs", revision, self._timeout
            )

    # -- watches ----------------------------------------------------------------------------

    def watch(self, from_revision: int) -> Watch:
        if self._closing:
            raise errors.internal("storage is closed")
        if from_revision < self.compacted:
            raise RevisionTooOld(from_revision, self.compacted)
        if from_revision >= self._floor and from_revision >= self._engine.oldest_revision - 1:
            return self._engine.watch(from_revision)
        return EtcdWatch(self.stubs, self.layout, from_revision)

    # -- the mirror -------------------------------------------------------------------------

    async def _run(self) -> None:
        backoff = 0.05
        while True:
            try:
                if not self._loaded.is_set() or self._synced < self.compacted:
                    await self._load()
                await self._follow()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if self._connected and not self._closing:
                    log.warning("etcd watch failed, reconnecting: %s", exc)
                self._connected = False
                self._last_error = rpc.to_status(exc).message if rpc.is_rpc_error(exc) else str(exc)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 1.0)
            else:
                backoff = 0.05

    async def _load(self) -> None:
        kvs = await self._range(self.layout.root, prefix_end(self.layout.root), 0)
        revision = self._range_revision
        objects: builtins.list[tuple[str, Obj]] = []
        for kv in kvs:
            parsed = self.layout.parse(kv.key)
            if parsed is not None:
                objects.append((parsed[0], decode(kv.value, kv.mod_revision)))
        if not self._loaded.is_set():
            self._engine.load(objects=objects, events=(), revision=revision)
        else:
            self._resync(objects, revision)
        self._synced = self._floor = revision
        self._loaded.set()

    def _resync(self, objects: Iterable[tuple[str, Obj]], revision: int) -> None:
        """After the watch fell behind a compaction: the differences as events."""
        log.warning("etcd compacted past the mirror's revision %d; relisting", self._synced)
        events = relist_events(self._engine, objects, revision)
        if events:
            self._engine.apply(events)
        self._engine.revision = max(self._engine.revision, revision)

    async def _follow(self) -> None:
        request = watch_request(self.layout, self._synced + 1, prev_kv=False)
        async for response in watch_stream(self.stubs, request):
            if response.created:
                self._connected = True
                self._watching.set()
                continue
            if response.canceled:
                if response.compact_revision:
                    self.compacted = max(self.compacted, response.compact_revision)
                    return
                raise RuntimeError(response.cancel_reason or "etcd cancelled the watch")
            if response.events:
                self._apply(response.events)
            elif response.header.revision > self._synced:
                self._synced = response.header.revision  # a progress notification
        raise RuntimeError("etcd closed the watch")

    def _apply(self, raw: Any) -> None:
        events = response_events(self.layout, self._engine, self._own, raw)
        last_rev = raw[-1].kv.mod_revision
        self._synced = max(self._synced, last_rev)
        if events:
            self._engine.apply(events)
        if self._waiters:
            for rev in [r for r in self._waiters if r <= last_rev]:
                future = self._waiters.pop(rev)
                if not future.done():
                    future.set_result(None)


if TYPE_CHECKING:
    _conforms: Storage = EtcdStorage(rpc.EtcdConfig(("http://127.0.0.1:2379",)))
