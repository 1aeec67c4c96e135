"""`draplane nodes`: N simulated nodes plus the node plugins of the named drivers.

Each node acts as `system:node:<name>`. When the kubeconfig sits in an API server data dir (next
to its `tokens` file), or `--data-dir` names one, every node gets its own token there, as
`draplane kubeconfig --user system:node:<name>` would give it; otherwise all nodes share the
kubeconfig's user. Their clients share one connection pool, each request with its node's
token. The drivers' node plugins run in this process, reached through a
`NodePluginRegistry` (as a DaemonSet would place them on every node). With `--kubelet-dir DIR`
they do not: node N is a kubelet rooted in DIR/N, where any DRA driver's kubelet plugin
registers (`plugins_registry/`) and finds the node's kubeconfig (`kubeconfig`, the node's
identity) to publish its ResourceSlices with.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from draplane.api import versions
from draplane.api.auth import NODE_PREFIX, SYSTEM_AUTHENTICATED, SYSTEM_NODES
from draplane.apiserver.authn import ensure_user_tokens
from draplane.apiserver.kubeconfig import build_kubeconfig, write_kubeconfig
from draplane.cli.driver import add_device_flags, device_profile, positive_seconds
from draplane.cli.fleetflag import add_fleet_flag
from draplane.cli.logs import add_logging_flags, setup_logging
from draplane.cli.process import (
    CommandError,
    add_master_flag,
    add_metrics_port_flag,
    cluster_mode,
    non_negative,
    positive,
    rest_client,
    run_until_signal,
    serve_metrics,
)
from draplane.client.connpool import ConnectionPool
from draplane.client.interface import Client
from draplane.client.kubeconfig import KubeConfig
from draplane.client.requestlog import logged
from draplane.client.rest import RESTClient
from draplane.controlplane.fleet import check_mode, fleet_node_shapes, fleet_plugin_factories
from draplane.dra.controller import NodePluginFactory, NodePluginRegistry
from draplane.drivers.example import (
    DRIVER_NAME,
    DeviceProfile,
    StatusClientSource,
    node_plugin_factory,
    status_clients,
    structured_node_plugin_factory,
)
from draplane.kubeletapi import KUBECONFIG
from draplane.metrics import component_registry
from draplane.node import Nodes

log = logging.getLogger(__name__)

NODE_PLUGINS = {"example": [DRIVER_NAME]}
"""`--driver` choices and the driver names whose node plugins they run."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("nodes", help="run simulated nodes (kubelets)")
    parser.add_argument("--kubeconfig", required=True)
    add_master_flag(parser)
    parser.add_argument("--count", type=positive, required=True, help="number of nodes")
    parser.add_argument(
        "--name-prefix", default="node-", help="nodes are named <prefix>0 ... <prefix>N-1"
    )
    parser.add_argument(
        "--driver",
        action="append",
        dest="drivers",
        choices=sorted(NODE_PLUGINS),
        help="run this driver's node plugin on every node (default: example)",
    )
    parser.add_argument(
        "--node-plugin",
        action="append",
        dest="extra_drivers",
        metavar="NAME",
        default=[],
        help="also run an example node plugin for driver NAME (e.g. driver2.example.com)",
    )
    parser.add_argument(
        "--data-dir",
        default="",
        help="API server data dir for per-node tokens "
        "(default: the kubeconfig's directory when it holds a tokens file)",
    )
    parser.add_argument(
        "--devices-per-node",
        type=non_negative,
        default=8,
        help="structured mode: devices each node's example plugin publishes (default 8)",
    )
    add_kubelet_dir_flag(parser)
    add_device_flags(parser)
    add_fleet_flag(parser)
    add_run_seconds_flag(parser)
    add_metrics_port_flag(parser)
    versions.add_argument(parser)
    add_logging_flags(parser)
    parser.set_defaults(func=async_main)


def add_run_seconds_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--run-seconds",
        type=positive_seconds,
        default=None,
        metavar="N",
        help="containers exit (code 0) after N seconds unless their pod's "
        "draplane.dev/run-seconds annotation says otherwise (default: they run until deleted)",
    )


def add_kubelet_dir_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kubelet-dir",
        default="",
        metavar="DIR",
        help="each node N is a kubelet rooted in DIR/N: DRA drivers' kubelet plugins register "
        "over gRPC in DIR/N/plugins_registry/ (instead of the example node plugin running "
        "in this process), CDI specs are read from DIR/N/cdi/, DIR/N/kubeconfig is the node's",
    )


def plugin_registry(
    drivers: list[str],
    extra_driver_names: list[str],
    *,
    mode: versions.Mode,
    profile: DeviceProfile,
    registry: NodePluginRegistry | None = None,
    status_clients_for: Callable[[str], StatusClientSource | None] = lambda _driver: None,
) -> NodePluginRegistry:
    """The node plugins of `mode`: classic DRA's prepare what the drivers' controllers
    allocated; with structured parameters each publishes `profile`'s devices, with
    `status_clients_for(driver)` giving each node's plugin its own credential."""
    factories: dict[versions.Dra, Callable[[str], NodePluginFactory]] = {
        versions.Dra.CLASSIC: node_plugin_factory,
        versions.Dra.STRUCTURED: lambda name: structured_node_plugin_factory(
            name, profile, status_client_for=status_clients_for(name)
        ),
    }
    factory = factories[mode.dra]
    registry = registry if registry is not None else NodePluginRegistry()
    names = [name for driver in drivers for name in NODE_PLUGINS[driver]]
    for name in dict.fromkeys(names + extra_driver_names):
        registry.register(name, factory(name))
    return registry


async def async_main(args: argparse.Namespace) -> int:
    setup_logging(args)
    clients: list[Client] = []
    pools: list[ConnectionPool] = []
    try:
        client_for_node = _client_factory(args, clients=clients, pools=pools)
        metrics = component_registry()
        nodes = Nodes(
            client_for_node,
            count=args.count,
            name_prefix=args.name_prefix,
            plugins=(plugins := NodePluginRegistry()),
            run_seconds=args.run_seconds,
            kubelet_dir=Path(args.kubelet_dir) if args.kubelet_dir else None,
            shape_for=fleet_node_shapes(args.fleet, prefix=args.name_prefix),
        )
        runner = await serve_metrics(metrics, port=args.metrics_port, ready=nodes.has_synced)
        try:

            async def run() -> None:
                mode = await cluster_mode(clients[0], args)
                status_clients_for = _status_clients(args, clients, pools)
                if args.kubelet_dir:
                    log.info(
                        "kubelet plugins register in %s/<node>/plugins_registry/", args.kubelet_dir
                    )
                elif args.fleet is not None:
                    _fleet_plugins(args, mode, plugins, status_clients_for)
                else:
                    plugin_registry(
                        args.drivers or ["example"],
                        args.extra_drivers,
                        mode=mode,
                        profile=device_profile(args, count=args.devices_per_node),
                        registry=plugins,
                        status_clients_for=status_clients_for,
                    )
                nodes.kubelet_version = mode.git_version
                nodes.claims = mode.resource_claims
                await nodes.run()

            return await run_until_signal(run, name="nodes")
        finally:
            if runner is not None:
                await runner.cleanup()
    finally:
        await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)
        await asyncio.gather(*(p.close() for p in pools), return_exceptions=True)


def _fleet_plugins(
    args: argparse.Namespace,
    mode: versions.Mode,
    plugins: NodePluginRegistry,
    status_clients_for: Callable[[str], StatusClientSource],
) -> None:
    """`--fleet`: each of the profile's drivers publishing what each node's type offers."""
    try:
        check_mode(args.fleet, mode)
    except ValueError as err:
        raise CommandError(str(err)) from err
    factories = fleet_plugin_factories(
        args.fleet, prefix=args.name_prefix, status_clients_for=status_clients_for
    )
    for driver, factory in factories.items():
        plugins.register(driver, factory)


def _client_factory(
    args: argparse.Namespace, *, clients: list[Client], pools: list[ConnectionPool]
) -> Callable[[str], Client]:
    """Clients per node name: each node's own user when a token file is at hand, else the
    kubeconfig's user for all. The nodes' clients share one connection pool (each request
    carries its node's token); every token is in the file before nodes start."""
    shared = rest_client(args.kubeconfig, args.master)
    clients.append(shared)
    data_dir = Path(args.data_dir) if args.data_dir else Path(args.kubeconfig).parent
    if not (data_dir / "tokens").exists():
        if args.data_dir:
            raise CommandError(f"no API server token file in --data-dir {data_dir}")
        log.warning("no token file in %s: every node uses the kubeconfig's user", data_dir)
        shared_logged = logged(shared)
        if args.kubelet_dir:
            for index in range(args.count):
                node_dir = Path(args.kubelet_dir) / f"{args.name_prefix}{index}"
                node_dir.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(args.kubeconfig, node_dir / KUBECONFIG)
        return lambda _name: shared_logged
    names = (f"{args.name_prefix}{index}" for index in range(args.count))
    users = {name: NODE_PREFIX + name for name in names}
    try:
        tokens = ensure_user_tokens(
            data_dir, [(user, (SYSTEM_NODES, SYSTEM_AUTHENTICATED)) for user in users.values()]
        )
    except (OSError, ValueError) as err:
        raise CommandError(f"cannot give the nodes users in {data_dir}: {err}") from err
    pool = _shared_pool(shared, pools)

    if args.kubelet_dir:
        _write_node_kubeconfigs(Path(args.kubelet_dir), shared, users, tokens)

    def for_node(name: str) -> Client:
        client = RESTClient(_as_user(shared, users[name], tokens[users[name]]), pool=pool)
        clients.append(client)
        return logged(client)

    return for_node


def _write_node_kubeconfigs(
    kubelet_dir: Path, shared: RESTClient, users: dict[str, str], tokens: dict[str, str]
) -> None:
    """DIR/<node>/kubeconfig: the node's identity, for the kubelet plugins on it."""
    config = shared.transport.config
    for name, user in users.items():
        kubeconfig = build_kubeconfig(
            server=",".join(config.endpoints),
            ca_pem=config.ca_pem or b"",
            user=user,
            token=tokens[user],
        )
        (kubelet_dir / name).mkdir(parents=True, exist_ok=True)
        write_kubeconfig(kubelet_dir / name / KUBECONFIG, kubeconfig)


def _shared_pool(shared: RESTClient, pools: list[ConnectionPool]) -> ConnectionPool:
    """The connection pool of every node's clients (opened once, closed at the end)."""
    if not pools:
        pools.append(ConnectionPool(_as_user(shared, "", ""), shared=True))
    return pools[0]


def _as_user(shared: RESTClient, user: str, token: str) -> KubeConfig:
    """The kubeconfig's servers and trust, as `user` with bearer `token`."""
    return replace(
        shared.transport.config,
        user=user,
        token=token,
        client_cert_pem=None,
        client_key_pem=None,
    )


def _status_clients(
    args: argparse.Namespace, clients: list[Client], pools: list[ConnectionPool]
) -> Callable[[str], StatusClientSource]:
    """Each driver's kubelet-plugin credential per node: a token of its service account bound
    to the Node, asked for as the API server data dir's admin (its `kubeconfig`, when the data
    dir is known), else as the `--kubeconfig` user (which may be refused: then status.devices
    stay unwritten, as logged). Their clients share the nodes' connection pool."""
    shared = clients[0]
    assert isinstance(shared, RESTClient)
    data_dir = Path(args.data_dir) if args.data_dir else Path(args.kubeconfig).parent
    requester = shared
    if (data_dir / "tokens").exists() and (data_dir / "kubeconfig").exists():
        servers = ",".join(shared.transport.config.endpoints)
        requester = rest_client(str(data_dir / "kubeconfig"), servers)
        clients.append(requester)
    pool = _shared_pool(shared, pools)

    def for_token(user: str, token: str) -> Client:
        client = RESTClient(_as_user(shared, user, token), pool=pool)
        clients.append(client)
        return logged(client)

    return lambda driver: status_clients(requester, for_token, driver)
