"""The checks of `draplane driver-check` that go beyond single calls: a prepare the plugin
refuses surfaces on the pod as a `FailedPrepareDynamicResources` event and is retried (needs
the node's kubelet running), and a plugin killed during a prepare comes back through
`--plugin-command` and prepares the claim (the harness finds the process that serves the DRA
socket in /proc, SIGKILLs it and runs the command)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import grpc.aio

from draplane.api import errors, kinds, meta
from draplane.clock import parse_time
from draplane.drivercheck._claims import SliceDevice, ref
from draplane.drivercheck._plugin import PluginClient, PluginNotFound, find_plugin
from draplane.drivercheck._report import CheckResult
from draplane.drivercheck._state import State
from draplane.kubeletapi import REGISTRY_DIR

LEASE_NAMESPACE = "kube-node-lease"
LEASE_FRESH_SECONDS = 40.0
EVENT_TIMEOUT = 30.0
RESTART_TIMEOUT = 30.0
PREPARE_FAILED = "FailedPrepareDynamicResources"
MISSING_DEVICE = "driver-check-no-such-device"


async def check_prepare_error_event(state: State, result: CheckResult) -> None:
    assert state.claims is not None
    opts = state.options
    if not await _node_running(state):
        result.skip(f"no kubelet runs node {opts.node} (its Lease is not being renewed)")
        return
    pool = state.devices[0].pool
    claim = await state.claims.claim([SliceDevice(pool, MISSING_DEVICE)])
    pod = state.claims.pods[-1]
    result.note(
        f"pod {meta.name(pod)} on {opts.node} uses claim {meta.name(claim)}, allocated device "
        f"{pool}/{MISSING_DEVICE} that the node's slices do not have"
    )
    deadline = asyncio.get_running_loop().time() + EVENT_TIMEOUT
    while True:
        listed = await opts.client.list(kinds.EVENTS, opts.namespace)
        events = [
            e
            for e in listed.get("items") or []
            if (e.get("involvedObject") or {}).get("uid") == meta.uid(pod)
            and e.get("reason") == PREPARE_FAILED
        ]
        count = sum(int(e.get("count") or 1) for e in events)
        if count >= 2:
            result.note(f"event {PREPARE_FAILED} x{count}: {events[-1].get('message')}")
            return
        if asyncio.get_running_loop().time() > deadline:
            result.fail(
                f"within {EVENT_TIMEOUT:.0f} s: {count} {PREPARE_FAILED} events (want a failure "
                "retried at least once); the plugin prepared a device it does not have?"
                + (f" last: {events[-1].get('message')}" if events else "")
            )
            return
        await asyncio.sleep(0.5)


async def _node_running(state: State) -> bool:
    try:
        lease = await state.options.client.get(kinds.LEASES, state.options.node, LEASE_NAMESPACE)
    except errors.StatusError as err:
        if errors.is_not_found(err):
            return False
        raise
    renewed = (lease.get("spec") or {}).get("renewTime")
    if not renewed:
        return False
    age = (datetime.now(UTC) - parse_time(str(renewed))).total_seconds()
    return age < LEASE_FRESH_SECONDS


async def check_plugin_restart(state: State, result: CheckResult) -> None:
    assert state.claims is not None and state.plugin is not None
    opts = state.options
    if not opts.plugin_command:
        result.skip("needs --plugin-command (how to start the plugin again)")
        return
    endpoint = state.plugin.endpoint
    pid = socket_owner(endpoint)
    if not result.expect(pid is not None, f"process serving {endpoint}: pid {pid}"):
        return
    assert pid is not None
    claim = await state.claims.claim(state.devices[:1])
    call = asyncio.create_task(state.plugin.prepare([ref(claim)]))
    await asyncio.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    try:
        await call
        result.note(f"SIGKILLed pid {pid}; the prepare in flight finished first")
    except grpc.aio.AioRpcError as err:
        result.note(f"SIGKILLed pid {pid} during NodePrepareResources: {err.code().name}")
    log = opts.node_dir / "driver-check-plugin.log"
    with log.open("ab") as out:
        started = subprocess.Popen(
            opts.plugin_command,
            shell=True,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
        )
    result.note(
        f"restarted with --plugin-command: pid {started.pid}, its own process group "
        f"(output in {log})"
    )
    client = await _wait_registered(state, result)
    if client is None:
        return
    try:
        response = await client.prepare([ref(claim)])
        entry = response.get(meta.uid(claim))
        result.expect(
            entry is not None and not entry.error and bool(entry.devices),
            f"NodePrepareResources after the restart: "
            f"{'left out' if entry is None else entry.error or 'prepared'}",
        )
        await client.unprepare([ref(claim)])
    except grpc.aio.AioRpcError as err:
        result.fail(f"NodePrepareResources after the restart: {err.code().name}: {err.details()}")
    finally:
        await client.close()


async def _wait_registered(state: State, result: CheckResult) -> PluginClient | None:
    assert state.plugin is not None
    opts = state.options
    deadline = asyncio.get_running_loop().time() + RESTART_TIMEOUT
    while asyncio.get_running_loop().time() < deadline:
        try:
            found = await find_plugin(opts.node_dir / REGISTRY_DIR, opts.driver)
        except PluginNotFound:
            await asyncio.sleep(0.2)
            continue
        endpoint = found.info.endpoint or str(found.socket)
        if Path(endpoint).exists():
            result.note(f"registration socket {found.socket.name} answers GetInfo again")
            return PluginClient(endpoint, state.plugin.service, timeout=opts.timeout)
        await asyncio.sleep(0.2)
    result.fail(f"the plugin did not come back within {RESTART_TIMEOUT:.0f} s")
    return None


def socket_owner(path: str) -> int | None:
    """The pid of a process holding the listening Unix socket bound to `path` (Linux)."""
    inodes: set[str] = set()
    try:
        with open("/proc/net/unix") as table:
            next(table)
            for line in table:
                fields = line.split()
                # grpcio binds `unix:///p` as "///p": compare without the extra slashes.
                if len(fields) >= 8 and "/" + fields[7].lstrip("/") == "/" + path.lstrip("/"):
                    inodes.add(fields[6])
    except OSError:
        return None
    targets = {f"socket:[{inode}]" for inode in inodes}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            for fd in os.scandir(f"/proc/{entry.name}/fd"):
                if os.readlink(fd.path) in targets:
                    return int(entry.name)
        except OSError:
            continue
    return None
