"""`Nodes`: N simulated nodes, each registering its Node, renewing its Lease and running a
`Kubelet` for the pods bound to it, all acting as `system:node:<name>` through their own client.

With a kubelet directory, node `<name>` lives in `<dir>/<name>/` as a kubelet in its root
directory: DRA drivers' kubelet plugins register through `plugins_registry/` and are called
over gRPC (`DRAManager`), prepared claims are checkpointed in `dra_manager_state`, CDI specs are
read from `cdi/`. Without one, the in-process `NodePluginRegistry` serves.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

from draplane.api import errors, kinds, meta
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.client.workqueue import ShutDown
from draplane.clock import REAL_CLOCK, Clock, format_micro_time, format_time, jitter
from draplane.dra.kubeletplugin import NodePluginRegistry, SlicePublishingPlugin
from draplane.kubeletapi import CDI_DIR, REGISTRY_DIR
from draplane.node import _objects
from draplane.node._checkpoint import FILE_NAME as CHECKPOINT_FILE, Checkpoint
from draplane.node._claims import NodeContext
from draplane.node._dramanager import DRAManager, PrepareFailed
from draplane.node._kubelet import Kubelet, PodKey
from draplane.node._pluginmanager import PluginManager
from draplane.node._slicewiper import WIPE_DELAY_SECONDS, SliceWiper

log = logging.getLogger(__name__)

LEASE_RENEW_SECONDS = 10.0
LEASE_RENEW_JITTER = 0.04
"""The kubelet's lease controller renews every renewInterval plus up to 4 % (wait.JitterUntil
with factor 0.04, the wait starting after each renewal), and so do the simulated nodes."""
WORKERS_PER_NODE = 2
PLUGIN_WORKERS_PER_NODE = 8
"""With kubelet plugins (calls that may hang until their 45 s timeout, as unpreparing a deleted
pod's claims does), more workers, as kubelet runs a worker per pod."""
STARTING_AT_ONCE = 64
"""Nodes registering and syncing their pod informer at the same time. Thousands of nodes
starting at once would queue thousands of list/watch starts behind each other, each waiting
for the watch cache to reach its list's revision (and timing out there); a bounded start, as
KWOK creates its nodes at a bounded rate, brings every node up sooner."""


class Nodes:
    def __init__(
        self,
        client_for_node: Callable[[str], Client],
        *,
        count: int,
        name_prefix: str = "node-",
        plugins: NodePluginRegistry,
        clock: Clock = REAL_CLOCK,
        run_seconds: float | None = None,
        claims: kinds.ResourceType = kinds.RESOURCE_CLAIMS,
        kubelet_version: str = _objects.KUBELET_VERSION,
        kubelet_dir: Path | None = None,
        slice_wipe_delay: float = WIPE_DELAY_SECONDS,
        shape_for: Callable[[str], _objects.NodeShape] = lambda _name: _objects.PLAIN,
    ) -> None:
        """`run_seconds`: how long containers run when their pod does not say
        (`draplane.dev/run-seconds`); None: until the pod is deleted. `claims`: the
        ResourceClaim kind of the API server's mode; `kubelet_version`: what the nodes report
        as `status.nodeInfo.kubeletVersion` (the API server's gitVersion); `kubelet_dir`: the
        nodes' root directories are its `<node name>/` (drivers register kubelet plugins
        there) instead of `plugins` serving them in-process; `slice_wipe_delay`: how long after
        the last plugin of a driver went away its ResourceSlices of a node are deleted;
        `shape_for(name)`: the labels and taints a new node registers with (a fleet's node
        type)."""
        self.names = [f"{name_prefix}{i}" for i in range(count)]
        self._client_for_node = client_for_node
        self._plugins = plugins
        self._clock = clock
        self._run_seconds = run_seconds
        self._shape_for = shape_for
        self.claims = claims
        """The ResourceClaim kind of the API server's mode (set before `run`)."""
        self.kubelet_version = kubelet_version
        """The API server's gitVersion (set before `run`)."""
        self.kubelet_dir = kubelet_dir
        self.slice_wipe_delay = slice_wipe_delay
        self.kubelets: dict[str, Kubelet] = {}
        self.plugin_managers: dict[str, PluginManager] = {}
        self._registered = 0

    def has_synced(self) -> bool:
        return self._registered == len(self.names) and all(
            k.informer.has_synced() for k in self.kubelets.values()
        )

    async def run(self) -> None:
        """Run every node until cancelled."""
        starting = asyncio.Semaphore(STARTING_AT_ONCE)
        async with asyncio.TaskGroup() as group:
            for index, name in enumerate(self.names):
                group.create_task(self._run_node(name, index=index, starting=starting))

    async def _run_node(self, name: str, *, index: int, starting: asyncio.Semaphore) -> None:
        await starting.acquire()
        started = False

        def done_starting() -> None:
            nonlocal started
            if not started:
                started = True
                starting.release()

        try:
            await self._start_node(name, index=index, done_starting=done_starting)
        finally:
            done_starting()

    async def _start_node(
        self, name: str, *, index: int, done_starting: Callable[[], None]
    ) -> None:
        client = self._client_for_node(name)
        node = await self._register(client, name, index=index)
        changed = asyncio.Event()
        dra = self._dra_manager(name, changed) if self.kubelet_dir is not None else None
        kubelet = Kubelet(
            NodeContext(
                client=client, node=node, plugins=self._plugins, claims=self.claims, dra=dra
            ),
            index=index,
            clock=self._clock,
            run_seconds=self._run_seconds,
        )
        self.kubelets[name] = kubelet
        wipers: list[SliceWiper] = []
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(kubelet.informer.run())
                group.create_task(self._renew_lease(client, node))
                await kubelet.informer.wait_synced()
                if dra is not None:
                    wiper = SliceWiper(client, name, clock=self._clock, delay=self.slice_wipe_delay)
                    wipers.append(wiper)
                    if self.claims.version == "v1":
                        # Structured parameters: ResourceSlices to wipe.
                        await wiper.start(set())
                    group.create_task(dra.plugins.run())
                    group.create_task(_on_plugin_changes(kubelet, dra, changed, wiper))
                else:
                    await self._start_plugins(client, node)
                self._registered += 1
                done_starting()
                for _ in range(WORKERS_PER_NODE if dra is None else PLUGIN_WORKERS_PER_NODE):
                    group.create_task(_work(kubelet))
        finally:
            kubelet.queue.shut_down()
            kubelet.cancel_prepares()
            for wiper in wipers:
                await wiper.close()
            await kubelet.recorder.flush()

    def _dra_manager(self, name: str, changed: asyncio.Event) -> DRAManager:
        assert self.kubelet_dir is not None
        root = self.kubelet_dir / name
        plugins = PluginManager(
            root / REGISTRY_DIR, node_name=name, on_change=lambda _driver: changed.set()
        )
        self.plugin_managers[name] = plugins
        return DRAManager(plugins, Checkpoint(root / CHECKPOINT_FILE), cdi_dir=root / CDI_DIR)

    async def _register(self, client: Client, name: str, *, index: int) -> Obj:
        """Create the Node, or refresh the status of the one a previous run created."""
        now = format_time(self._clock.now())
        while True:
            try:
                try:
                    return await client.create(
                        kinds.NODES,
                        _objects.node_object(
                            name,
                            index=index,
                            now=now,
                            kubelet_version=self.kubelet_version,
                            shape=self._shape_for(name),
                        ),
                    )
                except errors.StatusError as err:
                    if not errors.is_already_exists(err):
                        raise
                existing = meta.deep_copy(await client.get(kinds.NODES, name))
                existing["status"] = _objects.node_status(
                    name, index=index, now=now, kubelet_version=self.kubelet_version
                )
                return await client.update(kinds.NODES, existing, subresource="status")
            except errors.StatusError as err:
                log.warning("node %s: registration failed, retrying: %s", name, err)
                await self._clock.sleep(1.0)

    async def _start_plugins(self, client: Client, node: Obj) -> None:
        """Let the plugins that publish ResourceSlices publish this node's, as the node
        (retrying while the API server refuses)."""
        for driver_name in self._plugins.driver_names:
            plugin = self._plugins.plugin(driver_name, meta.name(node))
            if not isinstance(plugin, SlicePublishingPlugin):
                continue
            while True:
                try:
                    await plugin.start(client, node)
                    break
                except errors.StatusError as err:
                    log.warning(
                        "node %s: %s: publishing ResourceSlices failed, retrying: %s",
                        meta.name(node),
                        driver_name,
                        err,
                    )
                    await self._clock.sleep(1.0)

    async def _renew_lease(self, client: Client, node: Obj) -> None:
        latest: Obj | None = None
        while True:
            renew_time = format_micro_time(self._clock.now())
            try:
                latest = await _write_lease(client, node, renew_time=renew_time, latest=latest)
            except (errors.StatusError, OSError, TimeoutError) as err:
                # An API server that cannot be reached: the kubelet keeps renewing.
                log.warning("node %s: lease renewal failed: %s", meta.name(node), err)
                latest = None
            await self._clock.sleep(jitter(LEASE_RENEW_SECONDS, LEASE_RENEW_JITTER))


async def _write_lease(client: Client, node: Obj, *, renew_time: str, latest: Obj | None) -> Obj:
    """Renew the node's Lease; returns the Lease as written.

    As kubelet's lease controller does, the renewal starts from the Lease this node wrote last
    (`latest`) rather than a GET: the node is the Lease's only writer, so the update nearly
    always succeeds; on a conflict (or any error) it falls back to GET and update."""
    if latest is not None:
        try:
            return await client.update(kinds.LEASES, _renewed(latest, node, renew_time))
        except errors.StatusError as err:
            log.info("node %s: lease update from the last written lease: %s", meta.name(node), err)
    try:
        current = await client.get(kinds.LEASES, meta.name(node), _objects.LEASE_NAMESPACE)
    except errors.StatusError as err:
        if not errors.is_not_found(err):
            raise
        return await client.create(
            kinds.LEASES,
            _objects.lease_object(node, renew_time=renew_time),
            _objects.LEASE_NAMESPACE,
        )
    return await client.update(kinds.LEASES, _renewed(current, node, renew_time))


def _renewed(lease: Obj, node: Obj, renew_time: str) -> Obj:
    updated = meta.deep_copy(lease)
    spec = updated.setdefault("spec", {})
    spec["holderIdentity"] = meta.name(node)
    spec["leaseDurationSeconds"] = _objects.LEASE_DURATION_SECONDS
    spec["renewTime"] = renew_time
    return updated


async def _on_plugin_changes(
    kubelet: Kubelet, dra: DRAManager, changed: asyncio.Event, wiper: SliceWiper
) -> None:
    """A kubelet plugin registered or went away: pods waiting for it try again now, claims of
    pods that are gone (deleted while the node or the plugin was down) are unprepared, and the
    slices of a driver with no plugin left are wiped after the delay."""
    while True:
        await changed.wait()
        changed.clear()
        if kubelet.ctx.claims.version == "v1":
            wiper.sync(set(dra.plugins.driver_names))
        pods = kubelet.informer.lister.list()
        for pod in pods:
            kubelet.queue.add(PodKey(meta.namespace(pod), meta.name(pod)))
        try:
            await dra.unprepare_missing({meta.uid(p) for p in pods})
        except PrepareFailed as err:
            log.info("node %s: %s", kubelet.ctx.node_name, err)


async def _work(kubelet: Kubelet) -> None:
    while True:
        try:
            key = await kubelet.queue.get()
        except ShutDown:
            return
        try:
            await kubelet.process(key)
        finally:
            kubelet.queue.done(key)
