"""`ProcessPlane`: the control plane as separate OS processes meeting over HTTPS, as users run
it: `draplane apiserver`, then `controller-manager`, `scheduler`, `driver example` (one per
driver) and `nodes`, each with its own user's kubeconfig (written into the data dir the way
`draplane kubeconfig --user` writes one).

The API server starts first and must answer /readyz; the ResourceClasses (DeviceClasses) and
the drivers' ClusterRoleBindings are created as admin; then the rest start and each must answer
its /healthz (`--metrics-port`, caches synced). Every child runs in its own process group with
PR_SET_PDEATHSIG, so none outlives the parent; its stdout and stderr come out line by line,
prefixed with `[component] `. `draplane up --processes` and `draplane bench --processes` both
start the cluster here.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import socket
import ssl
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from draplane.api import auth, versions
from draplane.apiserver.kubeconfig import kubeconfig_for_user, write_kubeconfig
from draplane.client.kubeconfig import load_kubeconfig
from draplane.client.rest import RESTClient
from draplane.controlplane.disable import NOTHING, Disabled
from draplane.controlplane.drivers import DriverSpec, ensure_driver_classes
from draplane.controlplane.fleet import ensure_fleet_classes
from draplane.controlplane.procstats import ProcessUsage, process_usage
from draplane.dra.controller import DRIVER_WORKERS
from draplane.fleets import Fleet
from draplane.storage.files import private_dir

DRAPLANE: tuple[str, ...] = (sys.executable, "-m", "draplane.cli.main")
"""This interpreter running the `draplane` command (the same code as the parent)."""

STOP_GRACE_SECONDS = 5.0
"""SIGTERM, then SIGKILL for a process group still there after this long."""
READY_TIMEOUT_SECONDS = 120.0
READY_SECONDS_PER_NODE = 0.05
"""More time for the nodes process to be ready, per simulated node (each registers its Node
and Lease and syncs its pod informer: 5,000 nodes took about 100 s on 2 cores)."""
LISTENING = "draplane apiserver listening on "
LINE_LIMIT = 1 << 22
"""The longest log line forwarded (asyncio's default of 64 KiB is too short for -v 6)."""
_PR_SET_PDEATHSIG = 1


@dataclass
class ProcessPlaneConfig:
    data_dir: str | None = None
    """None: a temporary directory (removed on stop)."""
    port: int = 6443
    """0 picks a free port."""
    nodes: int = 4
    node_prefix: str = "node-"
    store: str = "sqlite"
    kubernetes_version: versions.Mode = versions.DEFAULT
    drivers: list[DriverSpec] = field(default_factory=lambda: [DriverSpec()])
    queueing_hints: bool = True
    pre_enqueue: bool = True
    driver_workers: int = DRIVER_WORKERS
    """`draplane driver example --workers` of each driver process."""
    run_seconds: float | None = None
    audit_log_path: str | None = None
    restored_store: bool = False
    apiserver_args: tuple[str, ...] = ()
    """More `draplane apiserver` flags (the `--etcd-*` ones)."""
    verbosity: int = 0
    log_format: str = "text"
    disabled: Disabled = NOTHING
    """Components not started (`draplane up --disable`)."""
    kubelet_dir: str | None = None
    """The nodes are kubelets in `<kubelet_dir>/<node>`, each with an example kubelet plugin
    process per driver (`draplane driver example kubelet-plugin`)."""
    fleet: Fleet | None = None
    """A fleet profile: its classes created here, `--fleet` for the nodes process."""


class ComponentExited(RuntimeError):
    """A component process ended on its own."""

    def __init__(self, name: str, pid: int, code: int) -> None:
        how = f"exited ({code})"
        if code < 0:
            try:
                how = f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"was killed by signal {-code}"
        super().__init__(f"component {name} (pid {pid}) {how}")
        self.name, self.pid, self.code = name, pid, code


@dataclass
class Child:
    """One component process."""

    name: str
    proc: asyncio.subprocess.Process
    metrics_port: int = 0
    lines: asyncio.Task[None] | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the parent dies (PR_SET_PDEATHSIG)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() == 1:  # the parent died before prctl took effect
        os._exit(1)


class ProcessPlane:
    def __init__(
        self, config: ProcessPlaneConfig, *, output: Callable[[str], None] | None = None
    ) -> None:
        self.config = config
        self.output = output if output is not None else _print
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if config.data_dir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="draplane-")
            self.data_dir = Path(self._tmp.name)
        else:
            self.data_dir = Path(config.data_dir)
        self.children: list[Child] = []
        self.url = ""

    @property
    def kubeconfig_path(self) -> Path:
        return self.data_dir / "kubeconfig"

    def admin_client(self) -> RESTClient:
        return RESTClient.from_kubeconfig(self.kubeconfig_path)

    async def start(self) -> None:
        """Start every process and wait until each is ready; raises ComponentExited when one
        ends first (the caller stops the others with `stop()`)."""
        private_dir(self.data_dir)
        apiserver = await self._spawn("apiserver", self._apiserver_args())
        self.url = await self._listening(apiserver)
        async with asyncio.timeout(READY_TIMEOUT_SECONDS):
            await self._until_ready(apiserver, f"{self.url}/readyz", admin=True)
        admin = self.admin_client()
        try:
            mode = self.config.kubernetes_version
            if self.config.fleet is not None:
                await ensure_fleet_classes(admin, self.config.fleet, mode=mode)
            else:
                await ensure_driver_classes(admin, self.config.drivers, mode=mode)
        finally:
            await admin.close()
        for name, args in self._component_args():
            await self._spawn(name, args, metrics_port=free_port())
        async with asyncio.timeout(
            READY_TIMEOUT_SECONDS + READY_SECONDS_PER_NODE * self.config.nodes
        ):
            await asyncio.gather(
                *(
                    self._until_ready(c, f"http://127.0.0.1:{c.metrics_port}/healthz")
                    for c in self.children
                    if c.metrics_port
                )
            )

    def _common(self) -> list[str]:
        return ["-v", str(self.config.verbosity), "--log-format", self.config.log_format]

    def _apiserver_args(self) -> list[str]:
        cfg = self.config
        args = ["apiserver", "--data-dir", str(self.data_dir), "--port", str(cfg.port)]
        args += ["--store", cfg.store, "--kubernetes-version", str(cfg.kubernetes_version)]
        if cfg.audit_log_path:
            args += ["--audit-log-path", cfg.audit_log_path]
        if cfg.restored_store:
            args.append("--restored-store")
        return [*args, *cfg.apiserver_args, *self._common()]

    def _kubeconfig(self, name: str, user: auth.UserInfo) -> str:
        path = self.data_dir / "components" / f"{name.replace('/', '-')}.kubeconfig"
        private_dir(path.parent)
        write_kubeconfig(
            path, kubeconfig_for_user(self.data_dir, user.name, groups=user.groups or None)
        )
        return str(path)

    def _component_args(self) -> list[tuple[str, list[str]]]:
        """(name, `draplane` arguments) of every component after the API server."""
        cfg = self.config
        mode = ["--kubernetes-version", str(cfg.kubernetes_version), *self._common()]
        solo = ["--leader-elect", "false"]  # one replica each, as in one process
        system = (auth.SYSTEM_AUTHENTICATED,)
        out: list[tuple[str, list[str]]] = []
        if cfg.disabled.controllers():
            manager = self._kubeconfig(
                "controller-manager", auth.UserInfo(auth.CONTROLLER_MANAGER, "", system)
            )
            args = ["controller-manager", "--kubeconfig", manager]
            args += ["--controllers", cfg.disabled.controllers_flag()]
            out.append(("controller-manager", [*args, *solo, *mode]))
        if not cfg.disabled.scheduler:
            scheduler = self._kubeconfig("scheduler", auth.UserInfo(auth.SCHEDULER, "", system))
            args = ["scheduler", "--kubeconfig", scheduler]
            args += ["--queueing-hints", _on_off(cfg.queueing_hints)]
            args += ["--pre-enqueue", _on_off(cfg.pre_enqueue)]
            out.append(("scheduler", [*args, *solo, *mode]))
        for spec in [] if cfg.fleet is not None else cfg.drivers:
            if not spec.has_controller(cfg.kubernetes_version):
                continue
            name = "driver" if len(cfg.drivers) == 1 else f"driver/{spec.name}"
            args = [
                "driver",
                "example",
                "--kubeconfig",
                self._kubeconfig(name, auth.driver_user(spec.name)),
            ]
            args += ["--driver-name", spec.name, *_device_args(spec), *solo, *mode]
            args += ["--workers", str(cfg.driver_workers)]
            if spec.shareable:
                args.append("--shareable")
            out.append((name, args))
        if cfg.nodes:
            first = spec_for_nodes(cfg.drivers)
            node0 = auth.node_user(f"{cfg.node_prefix}0")
            args = ["nodes", "--kubeconfig", self._kubeconfig("nodes", node0)]
            args += ["--count", str(cfg.nodes), "--name-prefix", cfg.node_prefix]
            args += ["--data-dir", str(self.data_dir)]
            if cfg.fleet is not None:
                args += ["--fleet", cfg.fleet.reference]
            else:
                args += _device_args(first, nodes=True)
                for spec in cfg.drivers:
                    args += ["--node-plugin", spec.name]
            if cfg.run_seconds is not None:
                args += ["--run-seconds", str(cfg.run_seconds)]
            if cfg.kubelet_dir:
                args += ["--kubelet-dir", cfg.kubelet_dir]
            out.append(("nodes", [*args, *mode]))
        return out + self._kubelet_plugin_args(mode)

    def _kubelet_plugin_args(self, mode: list[str]) -> list[tuple[str, list[str]]]:
        """One kubelet-plugin process per node and driver, as the node (its kubeconfig)."""
        cfg = self.config
        out: list[tuple[str, list[str]]] = []
        for spec in cfg.drivers if cfg.kubelet_dir else []:
            for node in (f"{cfg.node_prefix}{i}" for i in range(cfg.nodes)):
                name = f"kubelet-plugin/{node}"
                name += f"/{spec.name}" if len(cfg.drivers) > 1 else ""
                args = ["driver", "example", "kubelet-plugin", "--node-name", node]
                args += ["--kubelet-dir", str(cfg.kubelet_dir), "--driver-name", spec.name]
                args += ["--kubeconfig", self._kubeconfig(name, auth.node_user(node))]
                out.append((name, [*args, *_device_args(spec, nodes=True), *self._common()]))
        return out

    async def _spawn(self, name: str, args: list[str], *, metrics_port: int = 0) -> Child:
        if metrics_port:
            args = [*args, "--metrics-port", str(metrics_port)]
        proc = await asyncio.create_subprocess_exec(
            *DRAPLANE,
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            limit=LINE_LIMIT,
            start_new_session=True,  # its own process group: signals reach it and its children
            preexec_fn=_die_with_parent,
        )
        child = Child(name, proc, metrics_port)
        self.children.append(child)
        self.output(f"[up] started {name} (pid {proc.pid})")
        if name != "apiserver":
            child.lines = asyncio.create_task(self._forward(child))
        return child

    async def _forward(self, child: Child) -> None:
        assert child.proc.stdout is not None
        while raw := await child.proc.stdout.readline():
            self.output(f"[{child.name}] {raw.decode(errors='replace').rstrip()}")

    async def _listening(self, apiserver: Child) -> str:
        """Forward the API server's lines; return its URL once it says it listens."""
        assert apiserver.proc.stdout is not None
        async with asyncio.timeout(READY_TIMEOUT_SECONDS):
            while raw := await apiserver.proc.stdout.readline():
                line = raw.decode(errors="replace").rstrip()
                self.output(f"[apiserver] {line}")
                if line.startswith(LISTENING):
                    apiserver.lines = asyncio.create_task(self._forward(apiserver))
                    return line.removeprefix(LISTENING).split(";")[0]
        code = await apiserver.proc.wait()
        raise ComponentExited(apiserver.name, apiserver.pid, code)

    def _session(self, *, admin: bool) -> tuple[aiohttp.ClientSession, ssl.SSLContext | bool]:
        """A session for the API server as admin (bearer token, the cluster CA), or for a
        component's plain-HTTP metrics endpoint."""
        if not admin:
            return aiohttp.ClientSession(), False
        config = load_kubeconfig(self.kubeconfig_path)
        headers = {"Authorization": f"Bearer {config.token}"}
        return aiohttp.ClientSession(headers=headers), config.ssl_context()

    async def _until_ready(self, child: Child, url: str, *, admin: bool = False) -> None:
        session, context = self._session(admin=admin)
        async with session:
            while True:
                if child.proc.returncode is not None:
                    raise ComponentExited(child.name, child.pid, child.proc.returncode)
                with contextlib.suppress(aiohttp.ClientError, OSError):
                    async with session.get(url, ssl=context) as response:
                        if response.status == 200:
                            return
                await asyncio.sleep(0.1)

    async def wait(self) -> None:
        """Return never: raise ComponentExited for the first process that ends."""
        waits = {asyncio.ensure_future(c.proc.wait()): c for c in self.children}
        try:
            done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in waits:
                task.cancel()
        child = waits[next(iter(done))]
        assert child.proc.returncode is not None
        raise ComponentExited(child.name, child.pid, child.proc.returncode)

    def usage(self) -> dict[str, ProcessUsage]:
        """CPU seconds and peak RSS of every process still running, by component."""
        found = {c.name: process_usage(c.pid) for c in self.children}
        return {name: usage for name, usage in found.items() if usage is not None}

    async def scrape(self, name: str) -> str:
        """A component's /metrics text (the API server's as admin)."""
        child = next(c for c in self.children if c.name == name)
        admin = name == "apiserver"
        url = f"{self.url}/metrics" if admin else f"http://127.0.0.1:{child.metrics_port}/metrics"
        session, context = self._session(admin=admin)
        async with session, session.get(url, ssl=context) as response:
            response.raise_for_status()
            return await response.text()

    async def stop(self) -> None:
        """The components, then the API server: SIGTERM to each process group, SIGKILL after
        STOP_GRACE_SECONDS; the groups are killed in the end in any case."""
        components = [c for c in self.children if c.name != "apiserver"]
        await _terminate(components)
        await _terminate([c for c in self.children if c.name == "apiserver"])
        for child in self.children:
            if child.lines is not None:
                with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                    await asyncio.wait_for(child.lines, 1.0)
        self.children.clear()
        if self._tmp is not None:
            self._tmp.cleanup()


async def _terminate(children: list[Child]) -> None:
    for child in children:
        _signal_group(child, signal.SIGTERM)
    for child in children:
        try:
            await asyncio.wait_for(child.proc.wait(), STOP_GRACE_SECONDS)
        except TimeoutError:
            _signal_group(child, signal.SIGKILL)
            await child.proc.wait()
        _signal_group(child, signal.SIGKILL)  # whatever it started and left behind


def _signal_group(child: Child, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, sig)


def _on_off(value: bool) -> str:
    return "on" if value else "off"


def spec_for_nodes(drivers: list[DriverSpec]) -> DriverSpec:
    """The driver whose device flags the node plugins get (the first one)."""
    return drivers[0] if drivers else DriverSpec()


def _device_args(spec: DriverSpec, *, nodes: bool = False) -> list[str]:
    args = ["--device-model", spec.device_model, "--device-memory", spec.device_memory]
    args += ["--partitionable", str(spec.partitions)]
    if nodes:
        count = 0 if spec.network_attached else spec.devices_per_node
        return [*args, "--devices-per-node", str(count)]
    if spec.network_attached:
        return [*args, "--network-attached", str(spec.network_attached)]
    return [*args, "--devices-per-node", str(spec.devices_per_node)]


def _print(line: str) -> None:
    print(line, flush=True)
