"""The CPU a node spends per pod to prepare and unprepare one claim through the example
driver, over gRPC (its kubelet plugin on real Unix sockets, the node's `DRAManager` with its
checkpoint, the plugin's helper reading the claim from the API) against in-process (the
example driver's `StructuredNodePlugin` called directly). Both sides run in this one process,
so `time.process_time()` covers the node, the plugin and the API server; the difference is what
gRPC adds. Run: `python -m draplane.bench.kubeletgrpc [--pods N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from pathlib import Path

from draplane.api import kinds, meta, versions
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.drivers.example import (
    DRIVER_NAME,
    DeviceProfile,
    KubeletPluginRunner,
    structured_node_plugin_factory,
)
from draplane.kubeletapi import CDI_DIR, REGISTRY_DIR
from draplane.node._checkpoint import Checkpoint
from draplane.node._dramanager import DRAManager
from draplane.node._pluginmanager import PluginManager
from draplane.testing.builders import make_node
from draplane.testing.cluster import start_cluster

NODE = "node-0"
DEVICES = 8


async def _claims(client: Client, count: int) -> list[Obj]:
    out: list[Obj] = []
    for i in range(count):
        claim = meta.deep_copy(
            await client.create(
                kinds.RESOURCE_CLAIMS_V1,
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaim",
                    "metadata": {"name": f"claim-{i}", "namespace": "default"},
                    "spec": {
                        "devices": {
                            "requests": [
                                {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}
                            ]
                        }
                    },
                },
                "default",
            )
        )
        result = {"request": "gpu", "driver": DRIVER_NAME, "pool": NODE, "device": "gpu-0"}
        claim["status"] = {"allocation": {"devices": {"results": [result]}}}
        out.append(await client.update(kinds.RESOURCE_CLAIMS_V1, claim, subresource="status"))
    return out


async def measure(pods: int) -> dict[str, float]:
    cluster = await start_cluster(mode=versions.STRUCTURED)
    root = Path(tempfile.mkdtemp(prefix="kg", dir="/tmp"))
    admin = cluster.client()
    tasks: list[asyncio.Task[None]] = []
    try:
        await admin.create(kinds.NODES, make_node(NODE).obj())
        claims = await _claims(admin, pods)
        profile = DeviceProfile(count=DEVICES)

        plugin = structured_node_plugin_factory(DRIVER_NAME, profile)(NODE)
        start = time.process_time()
        for claim in claims:
            await plugin.prepare(claim)
            await plugin.unprepare(claim)
        in_process = (time.process_time() - start) / pods

        node_dir = root / NODE
        runner = KubeletPluginRunner(admin, NODE, node_dir, profile)
        manager = PluginManager(node_dir / REGISTRY_DIR, node_name=NODE)
        tasks += [asyncio.create_task(runner.run()), asyncio.create_task(manager.run())]
        while not manager.driver_names or not runner.has_synced():
            await asyncio.sleep(0.05)
        dra = DRAManager(
            manager, Checkpoint(node_dir / "dra_manager_state"), cdi_dir=node_dir / CDI_DIR
        )
        start = time.process_time()
        for i, claim in enumerate(claims):
            await dra.prepare(f"pod-{i}", [(claim, DRIVER_NAME)])
            await dra.unprepare_pod(f"pod-{i}")
        grpc_path = (time.process_time() - start) / pods
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
    return {
        "pods": pods,
        "in_process_ms": in_process * 1000,
        "grpc_ms": grpc_path * 1000,
        "added_ms": (grpc_path - in_process) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pods", type=int, default=500)
    args = parser.parse_args()
    figures = asyncio.run(measure(args.pods))
    print(
        f"{figures['pods']:.0f} pods: in-process {figures['in_process_ms']:.2f} ms CPU/pod, "
        f"gRPC {figures['grpc_ms']:.2f} ms CPU/pod, added {figures['added_ms']:.2f} ms"
    )


if __name__ == "__main__":
    main()
