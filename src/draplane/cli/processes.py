"""`draplane up --processes`: the control plane as one OS process per component
(`draplane.controlplane.processes`), until SIGINT/SIGTERM or until one of them ends on its own,
which `up` names with its exit code before it stops the others and exits 1."""

from __future__ import annotations

import argparse
import errno
from collections.abc import Callable

from draplane.cli.process import CommandError, run_until_signal
from draplane.controlplane import ControlPlaneConfig
from draplane.controlplane.processes import ComponentExited, ProcessPlane, ProcessPlaneConfig

_ETCD_FLAGS = ("servers", "cafile", "certfile", "keyfile")


def process_config(args: argparse.Namespace, config: ControlPlaneConfig) -> ProcessPlaneConfig:
    """What `up`'s flags ask for, as separate processes."""
    etcd: list[str] = []
    for flag in _ETCD_FLAGS:
        value = getattr(args, f"etcd_{flag}", "")
        if value:
            etcd += [f"--etcd-{flag}", value]
    prefix = getattr(args, "etcd_prefix", "/registry")
    if prefix != "/registry":
        etcd += ["--etcd-prefix", prefix]
    return ProcessPlaneConfig(
        data_dir=config.data_dir,
        port=config.port,
        nodes=config.nodes,
        node_prefix=config.node_prefix,
        store=config.store,
        kubernetes_version=config.kubernetes_version,
        drivers=config.drivers,
        queueing_hints=config.queueing_hints,
        pre_enqueue=config.pre_enqueue,
        run_seconds=config.run_seconds,
        audit_log_path=config.audit_log_path,
        restored_store=config.restored_store,
        apiserver_args=tuple(etcd),
        verbosity=int(args.verbosity),
        log_format=args.log_format,
        disabled=config.disabled,
        kubelet_dir=config.kubelet_dir,
        fleet=config.fleet,
    )


async def run_processes(
    args: argparse.Namespace,
    config: ControlPlaneConfig,
    *,
    describe: Callable[[str], str],
    layout: str = "",
) -> int:
    """Run until a signal (0) or until a component ends (CommandError); `describe(url)` is
    the line printed once every process is ready, `layout` (the kubelet directories) after
    the kubeconfig."""
    plane = ProcessPlane(process_config(args, config))
    try:
        try:
            await plane.start()
        except ComponentExited as err:
            raise CommandError(f"cannot start the control plane: {err}") from err
        except OSError as err:
            if err.errno == errno.EADDRINUSE:
                raise CommandError(f"127.0.0.1:{config.port} is already in use") from err
            raise CommandError(f"cannot start the control plane: {err}") from err
        except TimeoutError as err:
            raise CommandError("the control plane did not become ready in time") from err

        def banner() -> None:
            print(describe(plane.url), flush=True)
            print(f"kubeconfig: {plane.kubeconfig_path}", flush=True)
            if layout:
                print(layout, flush=True)
            print(f"try: kubectl --kubeconfig {plane.kubeconfig_path} get nodes", flush=True)

        async def watch() -> None:
            try:
                await plane.wait()
            except ComponentExited as err:
                raise CommandError(f"{err}; the others were stopped") from err

        code = await run_until_signal(watch, name="control plane", started=banner)
        print("stopping...", flush=True)
    finally:
        await plane.stop()
    return code
