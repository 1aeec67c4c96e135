"""The checks of `draplane driver-check`, run in order against one plugin on one node: each
fills a `CheckResult` with the calls it made and what it saw. Later checks need what earlier
ones found (the plugin's endpoint, the node's devices) and are skipped without it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc.aio

from draplane.api import errors, kinds, meta
from draplane.api.meta import Obj
from draplane.drivercheck._chaos import check_plugin_restart, check_prepare_error_event
from draplane.drivercheck._claims import ClaimMaker, SliceDevice, ref, unknown_ref
from draplane.drivercheck._plugin import (
    PluginClient,
    PluginNotFound,
    common_service,
    devices_of,
    find_plugin,
    is_dra_plugin,
)
from draplane.drivercheck._report import PASS, CheckResult, Report
from draplane.drivercheck._state import Options, State
from draplane.kubeletapi import CDI_DIR, DRA_SERVICES, REGISTRY_DIR, cdi

MANY_CLAIMS = 4


Check = Callable[[State, CheckResult], Awaitable[None]]


async def check_registration(state: State, result: CheckResult) -> None:
    opts = state.options
    try:
        found = await find_plugin(opts.node_dir / REGISTRY_DIR, opts.driver)
    except PluginNotFound as err:
        result.fail(str(err))
        return
    info = found.info
    result.note(f"socket {found.socket}")
    result.note(
        f"GetInfo: type={info.type!r} name={info.name!r} endpoint={info.endpoint!r} "
        f"supported_versions={list(info.supported_versions)}"
    )
    result.expect(is_dra_plugin(info), f"type is DRAPlugin (got {info.type!r})")
    service = common_service(list(info.supported_versions))
    if not result.expect(
        service is not None, f"a service the node speaks ({list(DRA_SERVICES)}): {service}"
    ):
        return
    assert service is not None
    endpoint = info.endpoint or str(found.socket)
    if result.expect(Path(endpoint).exists(), f"endpoint {endpoint} exists"):
        state.plugin = PluginClient(endpoint, service, timeout=opts.timeout)


async def check_slices(state: State, result: CheckResult) -> None:
    opts = state.options
    node = await opts.client.get(kinds.NODES, opts.node)
    listed = await opts.client.list(
        kinds.RESOURCE_SLICES, field_selector=f"spec.nodeName={opts.node}"
    )
    mine = [s for s in listed.get("items") or [] if s["spec"].get("driver") == opts.driver]
    if not result.expect(bool(mine), f"{len(mine)} ResourceSlices with nodeName={opts.node}"):
        return
    pools: dict[str, list[Obj]] = {}
    for slice_ in mine:
        pools.setdefault(str((slice_["spec"].get("pool") or {}).get("name")), []).append(slice_)
    for pool, slices in sorted(pools.items()):
        generation = max(int(s["spec"]["pool"].get("generation") or 0) for s in slices)
        current = [s for s in slices if int(s["spec"]["pool"].get("generation") or 0) == generation]
        counts = {int(s["spec"]["pool"].get("resourceSliceCount") or 0) for s in current}
        result.expect(
            counts == {len(current)},
            f"pool {pool!r} generation {generation}: {len(current)} slices, "
            f"resourceSliceCount {sorted(counts)}",
        )
        names = [str(d.get("name")) for s in current for d in s["spec"].get("devices") or []]
        result.expect(
            len(names) == len(set(names)), f"pool {pool!r}: device names unique ({len(names)})"
        )
        state.devices += [SliceDevice(pool, name) for name in names]
    for slice_ in mine:
        owners = meta.metadata(slice_).get("ownerReferences") or []
        owned = any(o.get("kind") == "Node" and o.get("uid") == meta.uid(node) for o in owners)
        result.expect(owned, f"{meta.name(slice_)} is owned by Node {opts.node}")
    result.expect(bool(state.devices), f"devices: {[d.device for d in state.devices][:8]}")


async def check_prepare_idempotent(state: State, result: CheckResult) -> None:
    assert state.plugin is not None and state.claims is not None
    claim = await state.claims.claim(state.devices[:1])
    state.prepared = claim
    first = await _prepare_one(state.plugin, claim, result, "first NodePrepareResources")
    second = await _prepare_one(state.plugin, claim, result, "second NodePrepareResources")
    if first is None or second is None:
        return
    result.expect(first == second, f"same devices both times: {first} / {second}")
    ids = [i for _, _, _, cdi_ids in first for i in cdi_ids]
    registry = cdi.load(state.options.node_dir / CDI_DIR)
    try:
        env = registry.resolve(ids)
        result.note(f"CDI devices {ids} resolve in {CDI_DIR}/: env {sorted(env)}")
    except cdi.CDIError as err:
        result.fail(f"CDI devices do not resolve: {err}")


async def check_unknown_claim(state: State, result: CheckResult) -> None:
    assert state.plugin is not None
    unknown = unknown_ref(state.options.namespace)
    try:
        prepared = await state.plugin.prepare([unknown])
    except grpc.aio.AioRpcError as err:
        result.fail(f"NodePrepareResources of an unknown claim failed the whole call: {err}")
    else:
        entry = prepared.get(unknown.uid)
        result.expect(
            entry is not None and bool(entry.error),
            f"NodePrepareResources of unknown claim {unknown.name}: per-claim error "
            f"{entry.error if entry is not None else '(no entry)'!r}",
        )
    try:
        unprepared = await state.plugin.unprepare([unknown])
    except grpc.aio.AioRpcError as err:
        result.fail(f"NodeUnprepareResources of an unknown claim failed the whole call: {err}")
        return
    entry = unprepared.get(unknown.uid)
    result.expect(
        entry is not None and not entry.error,
        "NodeUnprepareResources of an unknown claim succeeds (nothing to undo): "
        f"{'(no entry)' if entry is None else repr(entry.error)}",
    )


async def check_unprepare_idempotent(state: State, result: CheckResult) -> None:
    assert state.plugin is not None
    if state.prepared is None:
        result.skip("no prepared claim")
        return
    claim = ref(state.prepared)
    for attempt in ("first", "second"):
        try:
            response = await state.plugin.unprepare([claim])
        except grpc.aio.AioRpcError as err:
            result.fail(f"{attempt} NodeUnprepareResources: {err.code().name}: {err.details()}")
            continue
        entry = response.get(claim.uid)
        result.expect(
            entry is not None and not entry.error,
            f"{attempt} NodeUnprepareResources: "
            f"{'(no entry)' if entry is None else repr(entry.error) or 'done'}",
        )


async def check_many_claims(state: State, result: CheckResult) -> None:
    assert state.plugin is not None and state.claims is not None
    count = min(MANY_CLAIMS, len(state.devices))
    claims = [await state.claims.claim([state.devices[i]]) for i in range(count)]
    refs = [ref(c) for c in claims]
    try:
        prepared = await state.plugin.prepare(refs)
    except grpc.aio.AioRpcError as err:
        result.fail(f"NodePrepareResources of {count} claims: {err.code().name}: {err.details()}")
        return
    for claim in refs:
        entry = prepared.get(claim.uid)
        result.expect(
            entry is not None and not entry.error and bool(entry.devices),
            f"{claim.name}: {_describe(entry)}",
        )
    try:
        unprepared = await state.plugin.unprepare(refs)
    except grpc.aio.AioRpcError as err:
        result.fail(f"NodeUnprepareResources of {count} claims: {err.code().name}")
        return
    failed = [c.name for c in refs if c.uid not in unprepared or unprepared[c.uid].error]
    result.expect(not failed, f"NodeUnprepareResources of {count} claims in one call: {failed}")


async def check_requests_and_configs(state: State, result: CheckResult) -> None:
    assert state.plugin is not None and state.claims is not None
    if len(state.devices) < 2:
        result.skip("the node's pool has fewer than 2 devices")
        return
    claim = await state.claims.claim(state.devices[:2], configs=True)
    result.note(f"claim {meta.name(claim)}: requests req-0, req-1, opaque config per request")
    devices = await _prepare_one(state.plugin, claim, result, "NodePrepareResources")
    if devices is None:
        return
    served = {r for requests, _, _, _ in devices for r in requests}
    all_requests = any(not requests for requests, _, _, _ in devices)
    result.expect(
        all_requests or served >= {"req-0", "req-1"},
        f"devices name the requests they serve: {sorted(served)}",
    )
    await state.plugin.unprepare([ref(claim)])


async def _prepare_one(
    plugin: PluginClient, claim: Obj, result: CheckResult, what: str
) -> list[Any] | None:
    try:
        response = await plugin.prepare([ref(claim)])
    except grpc.aio.AioRpcError as err:
        result.fail(f"{what}: {err.code().name}: {err.details()}")
        return None
    entry = response.get(meta.uid(claim))
    if not result.expect(entry is not None and not entry.error, f"{what}: {_describe(entry)}"):
        return None
    return devices_of(entry)


def _describe(entry: Any) -> str:
    if entry is None:
        return "left out of the response"
    if entry.error:
        return f"error {entry.error!r}"
    return f"devices {devices_of(entry)}"


CHECKS: list[tuple[str, str, Check, bool]] = [
    ("registration", "GetInfo, type and version negotiation", check_registration, False),
    ("slices", "ResourceSlices published, valid, owned by the node", check_slices, False),
    (
        "prepare-idempotent",
        "same claim prepared twice, CDI IDs resolve",
        check_prepare_idempotent,
        True,
    ),
    ("unknown-claim", "a claim the API does not have", check_unknown_claim, True),
    ("unprepare-idempotent", "same claim unprepared twice", check_unprepare_idempotent, True),
    ("many-claims", f"several claims (up to {MANY_CLAIMS}) in one call", check_many_claims, True),
    (
        "requests-and-configs",
        "one claim, two requests, opaque configs",
        check_requests_and_configs,
        True,
    ),
    (
        "prepare-error-event",
        "a refused prepare is a pod event, retried",
        check_prepare_error_event,
        True,
    ),
    (
        "plugin-restart",
        "plugin killed during a prepare, restarted, prepares",
        check_plugin_restart,
        True,
    ),
]
"""(name, description, check, needs the plugin and the node's devices)."""


async def run_checks(options: Options) -> Report:
    report = Report(options.driver, options.node)
    state = State(options)
    claims = ClaimMaker(
        options.client, options.driver, options.node, options.namespace, options.parameters
    )
    try:
        for name, description, check, needs_plugin in CHECKS:
            result = CheckResult(name, description)
            report.checks.append(result)
            if needs_plugin and (state.plugin is None or not state.devices):
                result.skip("needs a registered plugin and devices on the node")
                continue
            if needs_plugin and state.claims is None:
                await claims.ensure_namespace()
                state.claims = claims
            try:
                await check(state, result)
            except (errors.StatusError, OSError) as err:
                result.fail(f"{type(err).__name__}: {err}")
            if result.status == PASS and not result.evidence:
                result.note("ok")
    finally:
        if state.plugin is not None:
            await state.plugin.close()
        await claims.cleanup()
    return report
