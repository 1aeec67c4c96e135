"""`draplane driver example kubelet-plugin --node-name N --kubelet-dir DIR`: the example
driver's kubelet plugin for one node (one process per node, as a DaemonSet runs one pod per
node). It registers with the node through `DIR/N/plugins_registry/`, serves the DRA gRPC
service from `DIR/N/plugins/<driver>/dra.sock`, writes CDI specs into `DIR/N/cdi/` and
publishes the node's ResourceSlices as the node, with `DIR/N/kubeconfig` (the node identity
`draplane nodes --kubelet-dir DIR` wrote there) unless `--kubeconfig` says otherwise."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from draplane.cli.logs import add_logging_flags, setup_logging
from draplane.cli.process import (
    CommandError,
    add_master_flag,
    add_metrics_port_flag,
    component_client,
    non_negative,
    run_until_signal,
    serve_metrics,
)
from draplane.drivers.example import DRIVER_NAME, DeviceProfile, KubeletPluginRunner
from draplane.kubeletapi import KUBECONFIG
from draplane.metrics import component_registry


def register(parts: Any, *, add_device_flags: Any) -> None:
    parser: argparse.ArgumentParser = parts.add_parser(
        "kubelet-plugin",
        help="the example driver's kubelet plugin on one node with a kubelet directory "
        "(resource.k8s.io/v1)",
    )
    parser.add_argument("--node-name", required=True, help="the node this plugin runs on")
    parser.add_argument(
        "--kubelet-dir",
        required=True,
        help="the nodes' kubelet directory (`draplane nodes --kubelet-dir`); the node's is "
        "DIR/<node-name>",
    )
    parser.add_argument(
        "--kubeconfig",
        dest="plugin_kubeconfig",
        default="",
        help="the node's kubeconfig (default DIR/<node-name>/kubeconfig)",
    )
    add_master_flag(parser)
    parser.add_argument("--driver-name", dest="plugin_driver_name", default=DRIVER_NAME)
    parser.add_argument(
        "--devices-per-node",
        dest="plugin_devices",
        type=non_negative,
        default=8,
        help="devices the node's pool offers (default 8)",
    )
    add_device_flags(parser)
    add_metrics_port_flag(parser)
    add_logging_flags(parser)
    parser.set_defaults(func=async_main)


async def async_main(args: argparse.Namespace) -> int:
    setup_logging(args)
    node_dir = Path(args.kubelet_dir) / args.node_name
    kubeconfig = args.plugin_kubeconfig or str(node_dir / KUBECONFIG)
    if not Path(kubeconfig).exists():
        raise CommandError(
            f"no kubeconfig {kubeconfig}: start `draplane nodes --kubelet-dir "
            f"{args.kubelet_dir}` first, or pass --kubeconfig"
        )
    client = component_client(kubeconfig, args.master)
    profile = DeviceProfile(
        count=args.plugin_devices,
        model=args.device_model,
        memory=args.device_memory,
        partitions=args.partitionable,
    )
    try:
        runner = KubeletPluginRunner(
            client,
            node_name=args.node_name,
            kubelet_dir=node_dir,
            profile=profile,
            driver_name=args.plugin_driver_name,
        )
        metrics = await serve_metrics(
            component_registry(), port=args.metrics_port, ready=runner.has_synced
        )
        try:
            return await run_until_signal(runner.run, name="kubelet plugin")
        finally:
            if metrics is not None:
                await metrics.cleanup()
    finally:
        await client.close()
