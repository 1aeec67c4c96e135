"""What every long-running `draplane` command shares: `CommandError` for failures the user fixes
(printed without a traceback), the kubeconfig's client, running until SIGINT/SIGTERM, and the
`--metrics-port` endpoint (`/metrics`, `/healthz` on 127.0.0.1).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import logging
import signal
from collections.abc import Awaitable, Callable, Iterator

import aiohttp
from aiohttp import web
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from draplane import looplag
from draplane.api import errors, versions
from draplane.client.interface import Client
from draplane.client.kubeconfig import KubeconfigError, load_kubeconfig
from draplane.client.requestlog import logged
from draplane.client.rest import RESTClient
from draplane.client.servermode import resolve_mode

log = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class CommandError(Exception):
    """A failure the user fixes (unreadable file, port in use): `error: ...` and exit code 1."""


def _integer(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid integer: {value!r}") from None


def non_negative(value: str) -> int:
    """argparse type: an integer >= 0."""
    number = _integer(value)
    if number < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {number}")
    return number


def positive(value: str) -> int:
    """argparse type: an integer >= 1."""
    number = _integer(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {number}")
    return number


def port_number(value: str) -> int:
    """argparse type: a TCP port, 0 meaning any free one (or off, for --metrics-port)."""
    number = non_negative(value)
    if number > 65535:
        raise argparse.ArgumentTypeError(f"must be a port number (0-65535), not {number}")
    return number


def listen_error(port: int, err: OSError, *, flag: str) -> CommandError:
    """The one-line error for a port on 127.0.0.1 that cannot be listened on; `flag` is the
    option that chooses it."""
    if err.errno == errno.EADDRINUSE:
        return CommandError(
            f"127.0.0.1:{port} is already in use (another draplane?): stop it or choose "
            f"another port with {flag} PORT"
        )
    return CommandError(f"cannot listen on 127.0.0.1:{port}: {err.strerror or err}")


def add_metrics_port_flag(parser: argparse.ArgumentParser) -> None:
    """`--metrics-port`, which `serve_metrics` serves (as every standalone component has)."""
    parser.add_argument(
        "--metrics-port",
        type=port_number,
        default=0,
        help="serve /metrics and /healthz on 127.0.0.1:PORT (0: off)",
    )


def add_restored_store_flag(parser: argparse.ArgumentParser) -> None:
    """`--restored-store`, for the commands that open the store (apiserver, up)."""
    parser.add_argument(
        "--restored-store",
        action="store_true",
        help="the sqlite store was restored from a backup: continue after the highest "
        "resourceVersion it issued (older watches get 410 Gone) instead of refusing to start",
    )


def add_master_flag(parser: argparse.ArgumentParser) -> None:
    """`--master`, as the Kubernetes components have: the API server URL overriding the
    kubeconfig's, here also a comma list of replicas' URLs to fail over along."""
    parser.add_argument(
        "--master",
        default="",
        help="API server URL, or URL,URL,... of replicas (overrides the kubeconfig's server)",
    )


def rest_client(kubeconfig: str, master: str = "") -> RESTClient:
    """A client for the kubeconfig's current context (against `master`'s URLs when given), its
    TLS settings checked up front (so a bad CA fails here, not as endless informer retries)."""
    try:
        config = load_kubeconfig(kubeconfig)
        if master:
            config = config.with_servers(master)
        config.ssl_context()
    except (KubeconfigError, OSError, ValueError) as err:
        first = (str(err).strip().splitlines() or [type(err).__name__])[0]  # one error line
        raise CommandError(f"cannot use kubeconfig {kubeconfig}: {first}") from err
    return RESTClient(config)


def component_client(kubeconfig: str, master: str = "") -> Client:
    """`rest_client(kubeconfig, master)` for a component: with `-v 6` it logs every request."""
    return logged(rest_client(kubeconfig, master))


@contextlib.contextmanager
def stop_on_signals(stop: asyncio.Event) -> Iterator[None]:
    """Set `stop` on SIGINT or SIGTERM while the block runs (the component's run), and probe
    the loop's lag meanwhile (`draplane_event_loop_lag_seconds`)."""
    loop = asyncio.get_running_loop()
    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, stop.set)
    looplag.PROBE.start()
    try:
        yield
    finally:
        looplag.PROBE.stop()
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)


async def run_until_signal(
    run: Callable[[], Awaitable[None]], *, name: str, started: Callable[[], None] | None = None
) -> int:
    """Run a component until SIGINT/SIGTERM (exit code 0) or until it fails (logged, 1).
    `started` runs once the signal handlers are in place (a command prints its banner there,
    so a signal sent as soon as the banner is read stops it cleanly)."""
    stop = asyncio.Event()
    with stop_on_signals(stop):
        if started is not None:
            started()
        task = asyncio.ensure_future(run())
        waiter = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
            task.cancel()
            await asyncio.gather(task, waiter, return_exceptions=True)
    if stop.is_set() or task.cancelled():
        log.info("%s stopped", name)
        return 0
    err = task.exception()
    if err is None:
        return 0
    if isinstance(err, CommandError):
        raise err  # one error line, printed by main
    log.error("%s failed", name, exc_info=err)
    return 1


async def serve_metrics(
    registry: CollectorRegistry, *, port: int, ready: Callable[[], bool]
) -> web.AppRunner | None:
    """Start the metrics endpoint when `port` is non-zero; the caller cleans the runner up."""
    if not port:
        return None

    async def metrics(_request: web.Request) -> web.Response:
        return web.Response(
            body=generate_latest(registry), headers={"Content-Type": CONTENT_TYPE_LATEST}
        )

    async def healthz(_request: web.Request) -> web.Response:
        ok = ready()
        return web.Response(text="ok" if ok else "not synced", status=200 if ok else 503)

    app = web.Application()
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/healthz", healthz)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", port).start()
    except OSError as err:
        await runner.cleanup()
        raise listen_error(port, err, flag="--metrics-port") from err
    log.info("serving metrics on http://127.0.0.1:%d/metrics", port)
    return runner


async def cluster_mode(client: Client, args: argparse.Namespace) -> versions.Mode:
    """The Kubernetes version of the cluster: `--kubernetes-version`, else the API server's
    `/version` (asked again, backing off up to 5 s, until the API server answers)."""
    pause = 0.2
    while True:
        try:
            mode = await resolve_mode(client, args.kubernetes_version)
            break
        except (errors.StatusError, OSError, aiohttp.ClientError) as err:
            log.warning("cannot ask the API server for its Kubernetes version: %s", err)
        except ValueError as err:
            raise CommandError(f"{err}: give --kubernetes-version") from err
        await asyncio.sleep(pause)
        pause = min(pause * 2, 5.0)
    log.info("Kubernetes %s API (resource.k8s.io/%s)", mode, mode.resource_claims.version)
    return mode
