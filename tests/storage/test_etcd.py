"""The etcd store beyond the shared conformance suite: kube-apiserver's key layout in etcd,
reads and watches older than the mirror's history served by etcd's MVCC store, compaction
(410 Expired after it, the kube-apiserver compactor's interval), two stores on one etcd (as two
API servers), and etcd going away and coming back (503, then recovery)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import orjson
import pytest

from draplane.api import errors
from draplane.api.kinds import CLUSTER_ROLES, NODES, PODS, RESOURCE_CLAIMS, ROLE_BINDINGS
from draplane.apiserver.storageerrors import to_status
from draplane.storage.errors import RevisionConflict, RevisionTooOld
from draplane.storage.etcd import EtcdStorage
from draplane.storage.etcd_flags import duration
from draplane.storage.etcd_keys import KeyLayout, prefix_end
from draplane.storage.etcd_process import EtcdCluster, EtcdMember
from draplane.storage.etcd_rpc import pb
from draplane.testing.builders import make_claim, make_node, make_pod
from draplane.testing.etcd import etcd_store

from .test_conformance import take

POD = PODS.key


@pytest.fixture
async def etcd(etcd_cluster: EtcdCluster) -> AsyncIterator[EtcdStorage]:
    store = etcd_store(etcd_cluster.client_urls)
    await store.start()
    yield store
    await store.close()


async def _keys(store: EtcdStorage) -> dict[str, bytes]:
    root = store.layout.root
    resp = await store.stubs.kv.Range(pb.RangeRequest(key=root, range_end=prefix_end(root)))
    return {kv.key.decode()[len(store.layout.prefix) :]: kv.value for kv in resp.kvs}


async def test_keys_laid_out_as_kube_apiserver_does(etcd: EtcdStorage) -> None:
    await etcd.create(POD, make_pod("a", "ns1").obj())
    await etcd.create(RESOURCE_CLAIMS.key, make_claim("c").obj())
    await etcd.create(NODES.key, make_node("n").obj())
    role = {"metadata": {"name": "admin"}, "rules": []}
    await etcd.create(CLUSTER_ROLES.key, role)
    binding = {"metadata": {"name": "b", "namespace": "ns1"}, "subjects": []}
    await etcd.create(ROLE_BINDINGS.key, binding)

    keys = await _keys(etcd)

    assert sorted(keys) == [
        "/clusterroles/admin",
        "/minions/n",
        "/pods/ns1/a",
        "/resourceclaims/default/c",
        "/rolebindings/ns1/b",
    ]
    stored = orjson.loads(keys["/pods/ns1/a"])
    assert "resourceVersion" not in stored["metadata"]
    assert stored["metadata"]["name"] == "a"


@pytest.mark.parametrize(
    ("key", "parsed"),
    [
        pytest.param(b"/registry/pods/ns/a", ("pods", "ns", "a"), id="namespaced"),
        pytest.param(b"/registry/minions/n", ("nodes", "", "n"), id="cluster-scoped-renamed"),
        pytest.param(
            b"/registry/resourceclaims/ns/c",
            ("resource.k8s.io/resourceclaims", "ns", "c"),
            id="grouped",
        ),
        pytest.param(b"/registry/pods/ns/a/b", None, id="too-deep"),
        pytest.param(b"/registry/widgets/ns/a", None, id="not-served"),
        pytest.param(b"/other/pods/ns/a", None, id="other-prefix"),
    ],
)
def test_key_layout_parses_its_keys(key: bytes, parsed: tuple[str, str, str] | None) -> None:
    assert KeyLayout("/registry").parse(key) == parsed


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        pytest.param("5m", 300.0, id="minutes"),
        pytest.param("1m30s", 90.0, id="compound"),
        pytest.param("250ms", 0.25, id="millis"),
        pytest.param("0", 0.0, id="disabled"),
    ],
)
def test_compaction_interval_is_a_go_duration(text: str, seconds: float) -> None:
    assert duration(text) == seconds


@pytest.mark.parametrize("text", [pytest.param("5", id="no-unit"), pytest.param("m", id="no-n")])
def test_bad_duration_is_value_error(text: str) -> None:
    with pytest.raises(ValueError, match="invalid duration"):
        duration(text)


async def test_reads_older_than_the_mirror_history_come_from_etcd(
    etcd_cluster: EtcdCluster,
) -> None:
    store = etcd_store(etcd_cluster.client_urls, history_size=1)
    await store.start()
    try:
        r0 = store.revision
        await store.create(POD, make_pod("a").obj())
        await store.create(POD, make_pod("b").obj())
        await store.update(POD, make_pod("a").label("v", "2").obj())
        await store.delete(POD, "default", "b")

        at_two = await store.list_at(POD, None, r0 + 2)
        watch = store.watch(r0 + 1)
        events = await take(watch, 3)
        await watch.close()
    finally:
        await store.close()

    assert [(o["metadata"]["name"], o["metadata"]["resourceVersion"]) for o in at_two] == [
        ("a", str(r0 + 1)),
        ("b", str(r0 + 2)),
    ]
    assert [(e.type, e.object["metadata"]["name"], e.revision) for e in events] == [
        ("ADDED", "b", r0 + 2),
        ("MODIFIED", "a", r0 + 3),
        ("DELETED", "b", r0 + 4),
    ]
    assert events[1].prev is not None and "labels" not in events[1].prev["metadata"]


async def test_compaction_to_the_revision_seen_one_interval_earlier(etcd: EtcdStorage) -> None:
    r0 = etcd.revision
    await etcd.create(POD, make_pod("a").obj())
    first = await etcd.compactor.compact_once()  # records the revision, compacts nothing
    await etcd.create(POD, make_pod("b").obj())
    second = await etcd.compactor.compact_once()
    recorded = second

    with pytest.raises(RevisionTooOld) as watch_err:
        etcd.watch(r0)
    with pytest.raises(RevisionTooOld) as list_err:
        await etcd.list_at(POD, None, r0)
    watch = etcd.watch(etcd.revision - 1)  # after the compacted revision: still served
    events = await take(watch, 1)
    await watch.close()

    assert first == 0
    assert recorded >= r0 + 1
    assert etcd.oldest_revision == recorded + 1
    assert to_status(watch_err.value).code == 410
    assert to_status(list_err.value).code == 410
    assert [e.object["metadata"]["name"] for e in events] == ["b"]


async def test_two_stores_on_one_etcd_see_each_others_writes(etcd: EtcdStorage) -> None:
    other = EtcdStorage(etcd.config, compaction_interval=0)
    await other.start()
    try:
        created = await etcd.create(POD, make_pod("a").obj())
        watch = other.watch(other.revision - 1)
        seen = await take(watch, 1)
        await watch.close()
        await other.update(
            POD,
            make_pod("a").label("by", "other").obj(),
            expected_rv=int(created["metadata"]["resourceVersion"]),
        )
        with pytest.raises(RevisionConflict):
            await etcd.update(
                POD,
                make_pod("a").label("by", "first").obj(),
                expected_rv=int(created["metadata"]["resourceVersion"]),
            )
    finally:
        await other.close()

    assert [e.object["metadata"]["name"] for e in seen] == ["a"]


async def _until(condition: object, timeout: float = 20.0) -> None:
    async def poll() -> None:
        while True:
            try:
                await condition()  # type: ignore[operator]
                return
            except errors.StatusError:
                await asyncio.sleep(0.05)

    await asyncio.wait_for(poll(), timeout)


@pytest.mark.slow
async def test_etcd_down_is_503_and_the_store_recovers(tmp_path: Path) -> None:
    cluster = EtcdCluster(str(tmp_path), unsafe_no_fsync=True)
    cluster.start()
    member: EtcdMember = cluster.members[0]
    store = etcd_store(cluster.client_urls)
    try:
        await store.start()
        await store.create(POD, make_pod("a").obj())
        await asyncio.to_thread(member.stop)

        with pytest.raises(errors.StatusError) as write_err:
            await store.create(POD, make_pod("b").obj())
        await _until(lambda: _expect_unavailable(store))
        with pytest.raises(errors.StatusError) as read_err:
            await store.get(POD, "default", "a")
        with pytest.raises(errors.StatusError) as check_err:
            await store.check()

        await asyncio.to_thread(member.start)
        await _until(store.check)
        after = await store.create(POD, make_pod("c").obj())
        names = [o["metadata"]["name"] for o in (await store.list(POD))[0]]
    finally:
        await store.close()
        cluster.stop()

    assert write_err.value.code in (503, 504)
    assert (read_err.value.code, read_err.value.reason) == (503, "ServiceUnavailable")
    assert check_err.value.code == 503
    assert after["metadata"]["name"] == "c"
    assert names == ["a", "c"]


async def _expect_unavailable(store: EtcdStorage) -> None:
    """Returns once the store reports etcd unavailable (raises while it still serves)."""
    try:
        await store.get(POD, "default", "a")
    except errors.StatusError as err:
        if err.code == 503:
            return
        raise
    raise errors.internal("still serving")
