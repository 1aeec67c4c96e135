"""One step of a Deployment rollout (rolling.go, recreate.go, sync.go, rollback.go): the
strategies, proportional scaling, history cleanup and the legacy rollback annotation, over
the reads and writes of a `DeploymentOps` (the `DeploymentController` is one).
"""

from __future__ import annotations

from typing import Protocol

from draplane.api import meta
from draplane.api.kinds import DEPLOYMENTS
from draplane.api.meta import Obj
from draplane.client.events import EventRecorder
from draplane.client.interface import Client
from draplane.clock import Clock
from draplane.controllers.controller_utils import pod_phase
from draplane.controllers.deployment_scale import (
    active,
    new_rs_new_replicas,
    old_scale_down,
    proportional_scale,
)
from draplane.controllers.deployment_status import (
    calculate_status,
    deployment_complete,
    rollout_status,
)
from draplane.controllers.deployment_util import (
    MAX_INT32,
    ROLLBACK_TO,
    by_creation,
    copyable_annotations,
    equal_ignore_hash,
    last_revision,
    replicas,
    revision,
    spec,
    status,
    template_without_hash,
)


class DeploymentOps(Protocol):
    """What a rollout step works through: the controller's client, clock and recorder, and its
    ReplicaSet and status operations."""

    @property
    def client(self) -> Client: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def recorder(self) -> EventRecorder: ...

    async def get_all_replica_sets(
        self, d: Obj, rss: list[Obj], *, create: bool
    ) -> tuple[Obj | None, list[Obj]]: ...

    def pods_by_replica_set(self, rss: list[Obj]) -> dict[str, list[Obj]]: ...

    async def scale_replica_set(self, d: Obj, rs: Obj, size: int) -> Obj: ...

    async def update_status(self, d: Obj, new_status: Obj) -> Obj: ...

    def requeue_stuck(self, d: Obj, new_status: Obj) -> None: ...

    async def delete_replica_set(self, rs: Obj) -> None: ...


def _all(new_rs: Obj | None, old: list[Obj]) -> list[Obj]:
    return [*([new_rs] if new_rs is not None else []), *old]


async def sync_rollout_status(
    dc: DeploymentOps, d: Obj, all_rss: list[Obj], new_rs: Obj | None
) -> None:
    new_status = rollout_status(d, all_rss, new_rs, dc.clock.now())
    if new_status == status(d):
        dc.requeue_stuck(d, new_status)
        return
    await dc.update_status(d, new_status)


async def sync_status_only(dc: DeploymentOps, d: Obj, rss: list[Obj]) -> None:
    new_rs, old = await dc.get_all_replica_sets(d, rss, create=False)
    await _sync_status(dc, d, _all(new_rs, old), new_rs)


async def _sync_status(dc: DeploymentOps, d: Obj, all_rss: list[Obj], new_rs: Obj | None) -> None:
    await dc.update_status(d, calculate_status(d, all_rss, new_rs, dc.clock.now()))


async def sync_scale(dc: DeploymentOps, d: Obj, rss: list[Obj]) -> None:
    """Proportional scaling for a scaling event or a paused Deployment (sync)."""
    new_rs, old = await dc.get_all_replica_sets(d, rss, create=False)
    by_name = {meta.name(rs): rs for rs in _all(new_rs, old)}
    for name, size in proportional_scale(d, new_rs, old).items():
        scaled = await dc.scale_replica_set(d, by_name[name], size)
        by_name[name] = scaled
    new_rs = by_name.get(meta.name(new_rs)) if new_rs is not None else None
    old = [by_name[meta.name(rs)] for rs in old]
    if spec(d).get("paused") and ROLLBACK_TO not in meta.annotations(d):
        await cleanup(dc, d, old)
    await _sync_status(dc, d, _all(new_rs, old), new_rs)


async def rollout_rolling(dc: DeploymentOps, d: Obj, rss: list[Obj]) -> None:
    new_rs, old = await dc.get_all_replica_sets(d, rss, create=True)
    all_rss = _all(new_rs, old)
    if new_rs is not None and replicas(new_rs) != replicas(d):
        target = replicas(d)
        if replicas(new_rs) < replicas(d):
            target = new_rs_new_replicas(d, all_rss, new_rs)
        if target != replicas(new_rs):
            new_rs = await dc.scale_replica_set(d, new_rs, target)
            await sync_rollout_status(dc, d, _all(new_rs, old), new_rs)
            return
    plan = old_scale_down(d, all_rss, active(old), new_rs)
    if plan:
        scaled = []
        for rs in old:
            if meta.name(rs) in plan:
                rs = await dc.scale_replica_set(d, rs, plan[meta.name(rs)])
            scaled.append(rs)
        await sync_rollout_status(dc, d, _all(new_rs, scaled), new_rs)
        return
    if deployment_complete(d, status(d)):
        await cleanup(dc, d, old)
    await sync_rollout_status(dc, d, all_rss, new_rs)


async def rollout_recreate(dc: DeploymentOps, d: Obj, rss: list[Obj]) -> None:
    new_rs, old = await dc.get_all_replica_sets(d, rss, create=False)
    scaled_down = False
    old_after = []
    for rs in old:
        if replicas(rs) > 0:
            rs = await dc.scale_replica_set(d, rs, 0)
            scaled_down = True
        old_after.append(rs)
    if scaled_down:
        await sync_rollout_status(dc, d, _all(new_rs, old_after), new_rs)
        return
    if _old_pods_running(dc, new_rs, old):
        await sync_rollout_status(dc, d, _all(new_rs, old), new_rs)
        return
    if new_rs is None:
        new_rs, old = await dc.get_all_replica_sets(d, rss, create=True)
    if new_rs is not None and replicas(new_rs) != replicas(d):
        new_rs = await dc.scale_replica_set(d, new_rs, replicas(d))
        await sync_rollout_status(dc, d, _all(new_rs, old), new_rs)
        return
    if deployment_complete(d, status(d)):
        await cleanup(dc, d, old)
    await sync_rollout_status(dc, d, _all(new_rs, old), new_rs)


def _old_pods_running(dc: DeploymentOps, new_rs: Obj | None, old: list[Obj]) -> bool:
    """Any old ReplicaSet still reports pods, or any pod of one is not Succeeded or Failed."""
    if any(int(status(rs).get("replicas") or 0) > 0 for rs in old):
        return True
    for pods in dc.pods_by_replica_set(old).values():
        if any(pod_phase(p) not in ("Succeeded", "Failed") for p in pods):
            return True
    return False


async def cleanup(dc: DeploymentOps, d: Obj, old: list[Obj]) -> None:
    """Delete the oldest old ReplicaSets beyond `revisionHistoryLimit` that have no replicas."""
    limit = spec(d).get("revisionHistoryLimit")
    if limit is None or int(limit) == MAX_INT32:
        return
    alive = [rs for rs in old if not meta.deletion_timestamp(rs)]
    diff = len(alive) - int(limit)
    if diff <= 0:
        return
    ordered = sorted(by_creation(alive), key=revision)
    for rs in ordered[:diff]:
        rs_status = status(rs)
        generation = int(meta.metadata(rs).get("generation") or 0)
        if (
            int(rs_status.get("replicas") or 0) != 0
            or replicas(rs) != 0
            or generation > int(rs_status.get("observedGeneration") or 0)
        ):
            continue
        await dc.delete_replica_set(rs)


async def rollback(dc: DeploymentOps, d: Obj, rss: list[Obj]) -> None:
    """The `deprecated.deployment.rollback.to` annotation: copy that revision's template."""
    new_rs, old = await dc.get_all_replica_sets(d, rss, create=True)
    all_rss = _all(new_rs, old)
    try:
        target = int(meta.annotations(d)[ROLLBACK_TO])
    except ValueError:
        target = -1
    if target == 0:
        target = last_revision(all_rss)
        if target == 0:
            dc.recorder.event(
                d, "Warning", "DeploymentRollbackRevisionNotFound", "Unable to find last revision."
            )
            await _clear_rollback(dc, d)
            return
    for rs in all_rss:
        if revision(rs) != target:
            continue
        template = spec(rs).get("template") or {}
        if equal_ignore_hash(spec(d).get("template") or {}, template):
            dc.recorder.event(
                d,
                "Warning",
                "DeploymentRollbackTemplateUnchanged",
                "The rollback revision contains the same template as current deployment "
                f'"{meta.name(d)}"',
            )
            await _clear_rollback(dc, d)
            return
        d["spec"]["template"] = template_without_hash(template)
        d["metadata"]["annotations"] = copyable_annotations(d, rs)
        dc.recorder.event(
            d,
            "Normal",
            "DeploymentRollback",
            f'Rolled back deployment "{meta.name(d)}" to revision {target}',
        )
        await _clear_rollback(dc, d)
        return
    dc.recorder.event(
        d,
        "Warning",
        "DeploymentRollbackRevisionNotFound",
        "Unable to find the revision to rollback to.",
    )
    await _clear_rollback(dc, d)


async def _clear_rollback(dc: DeploymentOps, d: Obj) -> None:
    body = meta.deep_copy(d)
    body["metadata"].get("annotations", {}).pop(ROLLBACK_TO, None)
    body.pop("status", None)
    await dc.client.update(DEPLOYMENTS, body)
