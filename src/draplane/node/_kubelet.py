"""`Kubelet`: runs the pods bound to one simulated node.

A pod informer with field selector `spec.nodeName=<node>` feeds a work queue of `PodKey`s. A
sync prepares the pod's claims once (remembered per pod UID), then writes the status
`_podstatus` computes for the clock's time (containers start, exit after their run time,
restart as `restartPolicy` says) and queues the pod again for its next change. On deletion it
stops the pod within its grace period: unprepares its claims, reports the terminal phase (which
releases its claims' reservations) and finishes the delete with grace period 0. A restarted
node re-learns its running pods by preparing them again, which the node plugins answer
idempotently (a node with a kubelet directory finds them in its checkpoint instead), and
computes the same status, so it writes neither status nor events again. With kubelet plugins
the env their CDI devices inject is recorded in the pod's `draplane.dev/CDIEnv` condition,
written with the status that starts the containers.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import NamedTuple, cast

from draplane.api import deviceconfig, errors, kinds, meta
from draplane.api.meta import Obj
from draplane.api.types import Pod, PodStatus
from draplane.client.events import EventRecorder
from draplane.client.informer import DeletedFinalStateUnknown, Informer
from draplane.client.ratelimit import ItemExponentialFailureRateLimiter
from draplane.client.workqueue import RateLimitingQueue
from draplane.clock import Clock, format_time, parse_time
from draplane.klog import V2, V4
from draplane.node import _objects, _podconditions, _podstatus
from draplane.node._claims import (
    PREPARE_FAILED,
    ClaimNotReady,
    NodeContext,
    PreparedClaim,
    container_env,
    find_claims,
    prepare_claims,
    unprepare_claims,
)

log = logging.getLogger(__name__)

CLAIMS_PREPARED = "ClaimsPrepared"
PREPARE_WAIT_SECONDS = 0.5
"""How long a worker waits for a pod's prepare through kubelet plugins before it moves on."""
TERMINAL_PHASES = _podconditions.TERMINAL_PHASES


class PodKey(NamedTuple):
    namespace: str
    name: str


@dataclass
class _PodRun:
    """What this node prepared for a pod it runs."""

    key: PodKey
    claims: list[PreparedClaim] = field(default_factory=list)
    cdi_env: str | None = None
    """The `deviceconfig.CDI_ENV_CONDITION` message of the pod's containers, if any."""


class Kubelet:
    def __init__(
        self,
        ctx: NodeContext,
        *,
        index: int,
        clock: Clock,
        run_seconds: float | None = None,
    ) -> None:
        self.ctx = ctx
        self._run_seconds = run_seconds
        self._host_ip = _objects.node_ip(index)
        self._index = index
        self._clock = clock
        self._ips = 0
        self.informer = Informer(
            ctx.client, kinds.PODS, field_selector=f"spec.nodeName={ctx.node_name}", clock=clock
        )
        self.queue: RateLimitingQueue[PodKey] = RateLimitingQueue(
            name=f"kubelet-{ctx.node_name}",
            # Claims are not watched here, so a waiting pod polls: quick at first, then every 5 s.
            rate_limiter=ItemExponentialFailureRateLimiter(base=0.05, cap=5.0),
            clock=clock,
        )
        self.recorder = EventRecorder(ctx.client, "kubelet", host=ctx.node_name, clock=clock)
        self._runs: dict[str, _PodRun] = {}
        self._preparing: dict[str, asyncio.Task[list[PreparedClaim]]] = {}
        """Pod UID -> its claims being prepared through kubelet plugins."""
        self._requeue_when_prepared: set[str] = set()
        """Pods whose prepare a worker stopped waiting for: queued again when it ends."""
        self.informer.add_handler(
            on_add=self._enqueue,
            on_update=lambda _old, new: self._enqueue(new),
            on_delete=self._enqueue,
        )

    def _enqueue(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            self.queue.add(PodKey(*meta.split_key(obj.key)))
        else:
            self.queue.add(PodKey(meta.namespace(obj), meta.name(obj)))

    async def process(self, key: PodKey) -> None:
        """One sync of the pod; failures are retried with backoff."""
        try:
            await self._sync(key)
        except _StillPreparing:
            return  # queued again when the prepare task ends
        except ClaimNotReady as err:
            pod = self.informer.lister.get(key.name, key.namespace)
            if pod is not None:
                self.recorder.event(pod, "Warning", err.reason, str(err))
            self.queue.add_rate_limited(key)
            return
        except Exception as err:
            # API errors (conflicts above all) and plugin failures: retry, never stop the node.
            log.info("node %s: pod %s/%s: %s", self.ctx.node_name, key.namespace, key.name, err)
            self.queue.add_rate_limited(key)
            return
        log.log(V4, "node %s: synced pod %s/%s", self.ctx.node_name, key.namespace, key.name)
        self.queue.forget(key)

    async def _sync(self, key: PodKey) -> None:
        pod = cast("Pod | None", self.informer.lister.get(key.name, key.namespace))
        if pod is None:
            for uid in [u for u, t in self._preparing.items() if t.done()]:
                # A prepare that ended after its pod went: the unprepare below catches up.
                _consume(self._preparing.pop(uid))
            for uid in [uid for uid, run in self._runs.items() if run.key == key]:
                await unprepare_claims(self.ctx, self._runs.pop(uid).claims, pod_uid=uid)
            if self.ctx.dra is not None:
                live = {meta.uid(p) for p in self.informer.lister.list()}
                await self.ctx.dra.unprepare_missing(live)
            return
        if meta.deletion_timestamp(pod):
            await self._finish_deletion(pod, key)
            return
        status = meta.pod_status(pod)
        if status.get("phase") in TERMINAL_PHASES:
            run = self._runs.pop(meta.uid(pod), None)
            claims = run.claims if run is not None else []
            await unprepare_claims(self.ctx, claims, pod_uid=meta.uid(pod))
            return
        if meta.uid(pod) not in self._runs:
            await self._prepare(pod, key)
        now = self._clock.now()
        started = pod
        if not _podstatus.is_started(status):
            self._ips += 1
            started = {
                **pod,
                "status": cast(
                    PodStatus,
                    _podstatus.start_status(
                        pod,
                        now=now,
                        host_ip=self._host_ip,
                        pod_ip=_objects.pod_ip(self._index, self._ips),
                    ),
                ),
            }
        how = _podstatus.behaviour(pod, default_run_seconds=self._run_seconds)
        new_status, wake = _podstatus.advance(started, how, now=now)
        run = self._runs.get(meta.uid(pod))
        claims = run.claims if run is not None else []
        if new_status["phase"] in TERMINAL_PHASES:
            # Release the claims before reporting completion: the claim controller then frees
            # them.
            self._runs.pop(meta.uid(pod), None)
            await unprepare_claims(self.ctx, claims, pod_uid=meta.uid(pod))
        await self._write_status(pod, new_status)
        if started is not pod:
            log.log(V2, "node %s: started pod %s", self.ctx.node_name, meta.key(pod))
            if claims:
                message = _prepared_message(claims)
                self.recorder.event(cast(Obj, pod), "Normal", CLAIMS_PREPARED, message)
        if wake is not None:
            # The clock is read again: it may have moved while the status was written.
            self.queue.add_after(key, max((wake - self._clock.now()).total_seconds(), 0.0))

    async def _prepare(self, pod: Pod, key: PodKey) -> None:
        """Prepare the pod's claims once per pod UID; a pod that must wait for them reports
        its containers as ContainerCreating."""
        try:
            claims = await self._prepare_claims(pod, key)
        except _StillPreparing:
            if not meta.pod_status(pod).get("containerStatuses"):
                now = self._clock.now()
                await self._write_status(
                    pod, _podstatus.pending_status(pod, now=now, host_ip=self._host_ip)
                )
            raise
        except ClaimNotReady:
            if not meta.pod_status(pod).get("containerStatuses"):
                now = self._clock.now()
                await self._write_status(
                    pod, _podstatus.pending_status(pod, now=now, host_ip=self._host_ip)
                )
            raise
        self._runs[meta.uid(pod)] = _PodRun(key, claims, container_env(self.ctx, pod, claims))

    async def _prepare_claims(self, pod: Pod, key: PodKey) -> list[PreparedClaim]:
        """With kubelet plugins the calls run in a task of the pod's own (as kubelet's pod
        workers do): a worker waits `PREPARE_WAIT_SECONDS` for it, then leaves it running
        (`_StillPreparing`) and the pod is queued again when it ends, so a plugin that hangs
        until its call times out never ties up the node's workers."""
        if self.ctx.dra is None:
            return await prepare_claims(self.ctx, pod)
        uid = meta.uid(pod)
        task = self._preparing.get(uid)
        if task is None:
            task = self._preparing[uid] = asyncio.create_task(prepare_claims(self.ctx, pod))
        done, _ = await asyncio.wait({task}, timeout=PREPARE_WAIT_SECONDS)
        if not done:
            if uid not in self._requeue_when_prepared:
                self._requeue_when_prepared.add(uid)
                task.add_done_callback(lambda _task: self._prepared(uid, key))
            raise _StillPreparing(uid)
        del self._preparing[uid]
        if task.cancelled():
            raise ClaimNotReady(PREPARE_FAILED, "preparing the pod's claims was cancelled")
        return task.result()

    def _prepared(self, uid: str, key: PodKey) -> None:
        self._requeue_when_prepared.discard(uid)
        self.queue.add(key)

    async def _write_status(self, pod: Pod, status: Obj) -> None:
        run = self._runs.get(meta.uid(pod))
        if run is not None and run.cdi_env is not None:
            status = _with_cdi_env(status, run.cdi_env, now=self._clock.now())
        if status == meta.pod_status(pod):
            return
        updated = meta.deep_copy(pod)
        updated["status"] = status
        await self.ctx.client.update(kinds.PODS, updated, subresource="status")

    async def _finish_deletion(self, pod: Pod, key: PodKey) -> None:
        """Stop the pod's containers within its grace period, report its terminal phase,
        then DELETE it with grace period 0 and a UID precondition.

        The stop signal went out when the deletion began (deletionTimestamp minus the grace
        period); the containers exit `draplane.dev/stop-seconds` later, or are killed at the
        deletionTimestamp. The terminal phase comes first, as kubelet writes it (its status
        manager): it is what tells the claim controller that the pod's claims are free. A pod
        that keeps other finalizers (a foreground deletion waits for its claims) would
        otherwise hold its reservations, and so its claims and itself, forever."""
        status = meta.pod_status(pod)
        md = meta.metadata(pod)
        if status.get("phase") not in TERMINAL_PHASES:
            now = self._clock.now()
            deadline = parse_time(str(md["deletionTimestamp"]))
            grace = float(md.get("deletionGracePeriodSeconds") or 0)
            stop_seconds = _podstatus.behaviour(pod).stop_seconds
            stop_at = min(deadline - timedelta(seconds=grace - stop_seconds), deadline)
            if not _podstatus.is_started(status):
                stop_at = now
            if stop_at > now:
                self.queue.add_after(key, (stop_at - now).total_seconds())
                return
            run = self._runs.pop(meta.uid(pod), None)
            claims = run.claims if run is not None else await find_claims(self.ctx, pod)
            await unprepare_claims(self.ctx, claims, pod_uid=meta.uid(pod))
            stopped = _podstatus.stopped_status(pod, at=stop_at, killed=stop_seconds > grace)
            await self._write_status(pod, stopped)
            log.log(
                V2,
                "node %s: stopped pod %s (%s)",
                self.ctx.node_name,
                meta.key(pod),
                stopped["phase"],
            )
        else:
            run = self._runs.pop(meta.uid(pod), None)
            claims = run.claims if run is not None else []
            await unprepare_claims(self.ctx, claims, pod_uid=meta.uid(pod))
        if md.get("deletionGracePeriodSeconds") == 0:
            return  # already finalized on our side; other finalizers hold the object
        try:
            await self.ctx.client.delete(
                kinds.PODS,
                meta.name(pod),
                meta.namespace(pod),
                grace_period_seconds=0,
                preconditions={"uid": meta.uid(pod)},
            )
        except errors.StatusError as err:
            if not errors.is_not_found(err) and not errors.is_conflict(err):
                raise

    def cancel_prepares(self) -> None:
        """The node stops: prepares still in flight are abandoned (a restarted node finds
        what finished in its checkpoint)."""
        for task in self._preparing.values():
            task.cancel()
        self._preparing.clear()

    @property
    def running_pods(self) -> list[PodKey]:
        return [run.key for run in self._runs.values()]


def _consume(task: asyncio.Task[list[PreparedClaim]]) -> None:
    if not task.cancelled():
        task.exception()


class _StillPreparing(Exception):
    """The pod's claims are still being prepared in its task."""


def _with_cdi_env(status: Obj, env: str, *, now: datetime) -> Obj:
    """The status with the `deviceconfig.CDI_ENV_CONDITION` condition saying `env` (its
    transition time kept while the message stays)."""
    conditions = list(status.get("conditions") or [])
    old = next((c for c in conditions if c.get("type") == deviceconfig.CDI_ENV_CONDITION), None)
    if old is not None and old.get("message") == env:
        return status
    condition = {
        "type": deviceconfig.CDI_ENV_CONDITION,
        "status": "True",
        "lastProbeTime": None,
        "lastTransitionTime": format_time(now),
        "reason": "Injected",
        "message": env,
    }
    kept = [c for c in conditions if c.get("type") != deviceconfig.CDI_ENV_CONDITION]
    return {**status, "conditions": [*kept, condition]}


def _prepared_message(claims: list[PreparedClaim]) -> str:
    parts = [
        f"{meta.name(c.claim)} ({', '.join(c.devices) if c.devices else 'no devices'})"
        for c in claims
    ]
    return "Prepared resource claims: " + "; ".join(parts)
