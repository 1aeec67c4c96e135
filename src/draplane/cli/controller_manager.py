"""`draplane controller-manager`: the controllers of `draplane.controllers.manager` (resource
claim, garbage collector, namespace, service account, ClusterRole aggregation and the workload
controllers) against an API server; `--controllers` picks them by kube-controller-manager's
names and syntax (`*,-resourceclaim-controller`).

The shared informers read as the kubeconfig's user (`system:kube-controller-manager`); with
`--use-service-account-credentials` (the default, as kubeadm runs it) each controller writes as
its service account `kube-system/<controller>`, whose token the manager requests at start
(creating the service account if needed), so each holds only its `system:controller:` role.
With `--leader-elect` (the default, as kube-controller-manager's) the controllers run only while
the manager holds Lease kube-system/kube-controller-manager.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Sequence
from dataclasses import replace

import aiohttp

from draplane.api import versions
from draplane.api.auth import controller_user
from draplane.api.errors import StatusError
from draplane.cli.leaderelect import add_leader_election_flags, leading
from draplane.cli.logs import add_logging_flags, setup_logging
from draplane.cli.process import (
    CommandError,
    add_master_flag,
    add_metrics_port_flag,
    cluster_mode,
    rest_client,
    run_until_signal,
    serve_metrics,
)
from draplane.client.requestlog import logged
from draplane.client.rest import RESTClient
from draplane.client.serviceaccounts import request_token
from draplane.controllers.manager import (
    CONTROLLER_NAMES,
    ControllerManager,
    enabled_controllers,
    service_account,
)
from draplane.metrics import component_registry

CONTROLLER_NAMESPACE = "kube-system"
TOKEN_SECONDS = 365 * 24 * 3600
TOKEN_RETRY_SECONDS = 1.0
log = logging.getLogger(__name__)
"""Controller tokens last a year (upstream's token source refreshes them instead)."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "controller-manager",
        help="run the resource claim, garbage collector, namespace, service account and "
        "ClusterRole aggregation controllers",
    )
    parser.add_argument("--kubeconfig", required=True)
    add_master_flag(parser)
    parser.add_argument(
        "--use-service-account-credentials",
        choices=("true", "false"),
        default="true",
        help="each controller writes as its own service account (default true)",
    )
    parser.add_argument(
        "--controllers",
        type=_controllers,
        default=CONTROLLER_NAMES,
        help="a comma-separated list of controllers to enable, as kube-controller-manager's: "
        "'*' enables all, 'foo' enables foo, '-foo' disables foo (default '*'; known: "
        + ", ".join(CONTROLLER_NAMES)
        + ")",
    )
    add_leader_election_flags(parser, default=True, resource_name="kube-controller-manager")
    add_metrics_port_flag(parser)
    versions.add_argument(parser)
    add_logging_flags(parser)
    parser.set_defaults(func=async_main)


def _controllers(value: str) -> tuple[str, ...]:
    try:
        return enabled_controllers([entry.strip() for entry in value.split(",") if entry.strip()])
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from err


async def async_main(args: argparse.Namespace) -> int:
    setup_logging(args)
    client = rest_client(args.kubeconfig, args.master)
    writers: dict[str, RESTClient] = {}
    managers: list[ControllerManager] = []
    metrics = component_registry()

    async def run() -> None:
        mode = await cluster_mode(client, args)
        if args.use_service_account_credentials == "true":
            writers.update(await service_account_clients(client, args.controllers))
        # With -v 6 every request is logged, the writers' too.
        manager = ControllerManager(
            logged(client),
            client_for=(lambda name: logged(writers[name])) if writers else None,
            metrics=metrics,
            mode=mode,
            controllers=args.controllers,
        )
        managers.append(manager)
        await manager.run()

    try:
        work, elector = leading(args, client, run, metrics=metrics)
        runner = await serve_metrics(
            metrics,
            port=args.metrics_port,
            ready=lambda: (
                any(m.has_synced() for m in managers) or not (elector is None or elector.is_leader)
            ),
        )
        try:
            return await run_until_signal(work, name="controller-manager")
        finally:
            if runner is not None:
                await runner.cleanup()
    finally:
        for writer in writers.values():
            await writer.close()
        await client.close()


async def service_account_clients(
    client: RESTClient, controllers: Sequence[str] = CONTROLLER_NAMES
) -> dict[str, RESTClient]:
    """A client per controller in `controllers`, by its service account's name, authenticated
    by a token of that service account (created when missing)."""
    clients: dict[str, RESTClient] = {}
    for name in (service_account(controller) for controller in controllers):
        while True:
            try:
                token = await request_token(
                    client, CONTROLLER_NAMESPACE, name, expiration_seconds=TOKEN_SECONDS
                )
                break
            except StatusError as err:
                if err.code < 500 and err.code != 429:
                    raise CommandError(
                        f"cannot get a token for service account {CONTROLLER_NAMESPACE}/{name}: "
                        f"{err}"
                    ) from err
                # The API server answers but cannot serve it now (its etcd is down): again.
                log.info("waiting for the API server to request tokens: %s", err)
                await asyncio.sleep(TOKEN_RETRY_SECONDS)
            except (aiohttp.ClientError, OSError) as err:
                # The API server is not up yet: ask again, as the component's informers would.
                log.info("waiting for the API server to request tokens: %s", err)
                await asyncio.sleep(TOKEN_RETRY_SECONDS)
        user = controller_user(name).name
        config = replace(client.transport.config, user=user, token=token)
        clients[name] = RESTClient(config)
    return clients
