"""`draplane up`: the whole control plane in one process (API server on the embedded store,
controller-manager, scheduler, example driver, simulated nodes) until SIGINT/SIGTERM;
`--disable` leaves components out (`draplane.controlplane.disable`)."""

from __future__ import annotations

import argparse
import errno
from typing import Any

from draplane.api import meta, versions
from draplane.cli.driver import add_device_flags
from draplane.cli.fleetflag import add_fleet_flag
from draplane.cli.logs import add_logging_flags, setup_logging
from draplane.cli.nodes import add_kubelet_dir_flag, add_run_seconds_flag
from draplane.cli.process import (
    CommandError,
    add_restored_store_flag,
    listen_error,
    non_negative,
    port_number,
    run_until_signal,
)
from draplane.cli.processes import run_processes
from draplane.controlplane import (
    ControlPlane,
    ControlPlaneConfig,
    DriverSpec,
    disable,
    driver_class,
)
from draplane.controlplane.fleet import STRUCTURED_ONLY
from draplane.fleets import Fleet
from draplane.storage import mode_marker
from draplane.storage.etcd_flags import EtcdFlags, add_etcd_flags, store_spec
from draplane.storage.interface import StoreError


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "up",
        help="run the whole control plane in one process",
        description="Start API server (HTTPS on 127.0.0.1), controller-manager, scheduler, the "
        "example driver and simulated nodes. Kubernetes 1.36 (resource.k8s.io/v1, DeviceClass "
        "gpu.example.com, the nodes publishing ResourceSlices) unless the data dir was written "
        "in another mode; --kubernetes-version 1.28 for classic DRA (resource.k8s.io/v1alpha2, "
        "ResourceClass `example`, PodSchedulingContext).",
    )
    parser.add_argument(
        "--data-dir",
        default="./.draplane",
        help="where the store, certificates, tokens and kubeconfig live",
    )
    parser.add_argument(
        "--port", type=port_number, default=6443, help="HTTPS port on 127.0.0.1 (0: any)"
    )
    parser.add_argument(
        "--nodes",
        type=non_negative,
        default=None,
        help="number of simulated nodes (default 4, or the --fleet profile's node count)",
    )
    parser.add_argument(
        "--store",
        default=None,
        help='"sqlite" (default), "memory", sqlite:///FILE or "etcd" (the default with '
        "--etcd-servers)",
    )
    parser.add_argument(
        "--transport",
        choices=("local", "http"),
        default="local",
        help="how components reach the API: in-process or over HTTPS",
    )
    parser.add_argument(
        "--processes",
        action="store_true",
        help="run the API server, controller-manager, scheduler, driver and nodes each in its "
        "own process (over HTTPS, each with its own kubeconfig); their logs come out prefixed "
        "with [component]",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--devices-per-node",
        type=non_negative,
        default=8,
        help="example driver devices on every node (0: unlimited; default 8)",
    )
    mode.add_argument(
        "--network-attached",
        type=non_negative,
        default=0,
        metavar="N",
        help="a cluster-wide pool of N example devices instead of per-node devices",
    )
    parser.add_argument("--shareable", action="store_true")
    parser.add_argument("--queueing-hints", choices=("on", "off"), default="on")
    parser.add_argument("--pre-enqueue", choices=("on", "off"), default="on")
    parser.add_argument(
        "--disable",
        type=_disabled,
        default=disable.NOTHING,
        metavar="NAME,...",
        help="components to leave out, to run Kubernetes' own (kube-scheduler, "
        "kube-controller-manager --controllers=...) against this API instead: "
        + ", ".join(disable.COMPONENTS),
    )
    parser.add_argument(
        "--audit-log-path",
        default="",
        help="write an audit.k8s.io/v1 Event JSON line per request to this file",
    )
    add_kubelet_dir_flag(parser)
    add_device_flags(parser)
    add_fleet_flag(parser)
    add_run_seconds_flag(parser)
    versions.add_argument(parser, server=True)
    add_restored_store_flag(parser)
    add_etcd_flags(parser)
    add_logging_flags(parser)
    parser.set_defaults(func=async_main)


DEFAULT_NODES = 4


def _disabled(value: str) -> disable.Disabled:
    try:
        return disable.parse(value)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from err


def _config(args: argparse.Namespace) -> ControlPlaneConfig:
    try:
        mode = mode_marker.mode_for(args.data_dir, args.kubernetes_version)
    except StoreError as err:
        raise CommandError(str(err)) from err
    etcd = EtcdFlags.from_args(args)
    try:
        store = store_spec(args.store, etcd)
    except ValueError as err:
        raise CommandError(str(err)) from err
    if args.kubelet_dir and mode.dra is not versions.Dra.STRUCTURED:
        raise CommandError("--kubelet-dir needs resource.k8s.io/v1 (--kubernetes-version 1.36)")
    fleet: Fleet | None = args.fleet
    if fleet is not None and mode.dra is not versions.Dra.STRUCTURED:
        raise CommandError(STRUCTURED_ONLY)
    if fleet is not None and (args.network_attached or args.partitionable or args.shareable):
        raise CommandError(
            "--fleet gives the devices: leave out --network-attached, --partitionable and "
            "--shareable (write them into a fleet file instead)"
        )
    if args.nodes is None:
        args.nodes = fleet.default_nodes if fleet is not None else DEFAULT_NODES
    if fleet is not None and args.kubelet_dir:
        raise CommandError(
            "--fleet and --kubelet-dir: the kubelet plugins publish the devices; leave out one"
        )
    return ControlPlaneConfig(
        data_dir=args.data_dir,
        kubelet_dir=args.kubelet_dir or None,
        port=args.port,
        nodes=args.nodes,
        fleet=fleet,
        store=store,
        transport=args.transport,
        queueing_hints=args.queueing_hints == "on",
        pre_enqueue=args.pre_enqueue == "on",
        audit_log_path=args.audit_log_path or None,
        restored_store=args.restored_store,
        run_seconds=args.run_seconds,
        etcd=etcd,
        kubernetes_version=mode,
        disabled=args.disable,
        drivers=[
            DriverSpec(
                devices_per_node=args.devices_per_node,
                network_attached=args.network_attached,
                shareable=args.shareable,
                device_model=args.device_model,
                device_memory=args.device_memory,
                partitions=args.partitionable,
            )
        ],
    )


def describe(config: ControlPlaneConfig, nodes: int, url: str) -> str:
    """What `up` prints first once the cluster is ready: its driver's class in the mode
    (DeviceClass gpu.example.com, or ResourceClass example in 1.28) or the fleet profile's
    classes and drivers, then the components left out, if any."""
    line = f"draplane is up: API server {url}, {nodes} nodes, "
    if config.fleet is not None:
        classes = ", ".join(meta.name(c) for c in config.fleet.device_classes) or "none"
        drivers = ", ".join(config.fleet.drivers) or "none"
        line += f"fleet {config.fleet.name}: DeviceClasses {classes} (drivers {drivers})"
    else:
        spec = config.drivers[0]
        klass = driver_class(spec, config.kubernetes_version)
        line += f"{klass['kind']} {meta.name(klass)} ({spec.name})"
    if not config.disabled.names:
        return line
    return f"{line}\ndisabled: {config.disabled.describe()} (run your own against the kubeconfig)"


def node_names(config: ControlPlaneConfig) -> list[str]:
    return [f"{config.node_prefix}{i}" for i in range(config.nodes)]


def kubelet_layout(kubelet_dir: str, nodes: list[str]) -> str:
    """Where a DRA driver's kubelet plugin finds each node (printed by `up --kubelet-dir`)."""
    example = nodes[0] if nodes else "<node>"
    root = f"{kubelet_dir}/{example}"
    return "\n".join(
        [
            f"kubelet dirs: {kubelet_dir}/<node> for nodes {', '.join(nodes)}",
            f"  {root}/plugins_registry/   kubelet plugins register here (<driver>-reg.sock)",
            f"  {root}/plugins/<driver>/   their DRA service sockets (dra.sock)",
            f"  {root}/cdi/                CDI spec files (JSON or YAML)",
            f"  {root}/kubeconfig          the node's identity (system:node:{example})",
            f"  {root}/dra_manager_state   the node's checkpoint of prepared claims",
        ]
    )


async def _start(config: ControlPlaneConfig) -> ControlPlane:
    try:
        plane = ControlPlane(config)
    except (ValueError, OSError, StoreError) as err:
        raise CommandError(str(err)) from err
    try:
        await plane.start()
    except BaseException as err:
        await plane.stop()
        if isinstance(err, OSError) and err.errno == errno.EADDRINUSE:
            raise listen_error(config.port, err, flag="--port") from err
        if isinstance(err, Exception):
            raise CommandError(f"cannot start the control plane: {err}") from err
        raise
    return plane


async def async_main(args: argparse.Namespace) -> int:
    setup_logging(args)
    config = _config(args)
    if args.processes:
        return await run_processes(
            args,
            config,
            describe=lambda url: describe(config, args.nodes, url),
            layout=kubelet_layout(config.kubelet_dir, node_names(config))
            if config.kubelet_dir
            else "",
        )
    plane = await _start(config)
    try:

        def banner() -> None:
            print(describe(config, args.nodes, plane.apiserver.url), flush=True)
            print(f"kubeconfig: {plane.kubeconfig_path}", flush=True)
            if config.kubelet_dir:
                print(kubelet_layout(config.kubelet_dir, node_names(config)), flush=True)
            print(f"try: kubectl --kubeconfig {plane.kubeconfig_path} get nodes", flush=True)

        code = await run_until_signal(plane.wait, name="control plane", started=banner)
        print("stopping...", flush=True)
    finally:
        await plane.stop()
    return code
