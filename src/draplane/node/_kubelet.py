"""`Kubelet`: runs the pods bound to one simulated node.

A pod informer with field selector `spec.nodeName=<node>` feeds a work queue of `PodKey`s. A
sync prepares the pod's claims once (remembered per pod UID), marks the pod Running, completes it
after `draplane.dev/run-seconds`, and on deletion stops it: unprepares its claims, reports the
terminal phase (which releases its claims' reservations) and finishes the delete with grace
period 0. A restarted node re-learns its running pods by preparing them again, which
the node plugins answer idempotently, without writing status or events again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from prometheus_client import CollectorRegistry

from draplane.api import errors, kinds, meta
from draplane.api.meta import Obj
from draplane.client.events import EventRecorder
from draplane.client.informer import DeletedFinalStateUnknown, Informer
from draplane.client.ratelimit import ItemExponentialFailureRateLimiter
from draplane.client.workqueue import RateLimitingQueue
from draplane.clock import Clock, format_time, parse_time
from draplane.klog import V2, V4
from draplane.node import _objects
from draplane.node._claims import (
    ClaimNotReady,
    NodeContext,
    PreparedClaim,
    find_claims,
    prepare_claims,
    unprepare_claims,
)

log = logging.getLogger(__name__)

RUN_SECONDS_ANNOTATION = "draplane.dev/run-seconds"
CLAIMS_PREPARED = "ClaimsPrepared"
DONE_PHASES = ("Succeeded", "Failed")


class PodKey(NamedTuple):
    namespace: str
    name: str


@dataclass
class _PodRun:
    key: PodKey
    started: datetime
    claims: list[PreparedClaim] = field(default_factory=list)


class Kubelet:
    def __init__(
        self,
        ctx: NodeContext,
        *,
        index: int,
        clock: Clock,
        metrics: CollectorRegistry | None = None,
    ) -> None:
        self.ctx = ctx
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
            metrics=metrics,
        )
        self.recorder = EventRecorder(ctx.client, "kubelet", host=ctx.node_name, clock=clock)
        self._runs: dict[str, _PodRun] = {}
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
        pod = self.informer.lister.get(key.name, key.namespace)
        if pod is None:
            for uid in [uid for uid, run in self._runs.items() if run.key == key]:
                await unprepare_claims(self.ctx, self._runs.pop(uid).claims)
            return
        if meta.deletion_timestamp(pod):
            await self._finish_deletion(pod)
            return
        run = self._runs.get(meta.uid(pod))
        if (pod.get("status") or {}).get("phase") in DONE_PHASES:
            if run is not None:
                await unprepare_claims(self.ctx, self._runs.pop(meta.uid(pod)).claims)
            return
        if run is None:
            run = await self._start(pod, key)
        await self._check_completion(pod, run)

    async def _start(self, pod: Obj, key: PodKey) -> _PodRun:
        claims = await prepare_claims(self.ctx, pod)
        status = pod.get("status") or {}
        if status.get("phase") == "Running" and status.get("startTime"):
            run = _PodRun(key, parse_time(str(status["startTime"])), claims)
            self._runs[meta.uid(pod)] = run
            return run
        now = self._clock.now()
        self._ips += 1
        updated = meta.deep_copy(pod)
        updated["status"] = _objects.running_status(
            pod,
            now=format_time(now),
            host_ip=_objects.node_ip(self._index),
            ip=_objects.pod_ip(self._index, self._ips),
        )
        await self.ctx.client.update(kinds.PODS, updated, subresource="status")
        log.log(V2, "node %s: started pod %s", self.ctx.node_name, meta.key(pod))
        run = _PodRun(key, now, claims)
        self._runs[meta.uid(pod)] = run
        if claims:
            self.recorder.event(pod, "Normal", CLAIMS_PREPARED, _prepared_message(claims))
        return run

    async def _check_completion(self, pod: Obj, run: _PodRun) -> None:
        try:
            run_seconds = float(meta.annotations(pod)[RUN_SECONDS_ANNOTATION])
        except (KeyError, ValueError):
            return
        remaining = run_seconds - (self._clock.now() - run.started).total_seconds()
        if remaining > 0:
            self.queue.add_after(run.key, remaining)
            return
        # Release the claims before reporting completion: the claim controller then frees them.
        await unprepare_claims(self.ctx, run.claims)
        run.claims = []
        updated = meta.deep_copy(pod)
        updated["status"] = _objects.succeeded_status(pod, now=format_time(self._clock.now()))
        await self.ctx.client.update(kinds.PODS, updated, subresource="status")
        log.log(V2, "node %s: pod %s completed", self.ctx.node_name, meta.key(pod))
        self._runs.pop(meta.uid(pod), None)

    async def _finish_deletion(self, pod: Obj) -> None:
        """Stop the pod, report its terminal phase, then DELETE it with grace period 0.

        The terminal phase comes first, as kubelet writes it (its status manager): it is
        what tells the claim controller that the pod's claims are free. A pod that keeps
        other finalizers (a foreground deletion waits for its claims) would otherwise hold its
        reservations, and so its claims and itself, forever."""
        run = self._runs.pop(meta.uid(pod), None)
        claims = run.claims if run is not None else await find_claims(self.ctx, pod)
        await unprepare_claims(self.ctx, claims)
        status = pod.get("status") or {}
        if status.get("phase") not in DONE_PHASES:
            updated = meta.deep_copy(pod)
            updated["status"] = _objects.terminated_status(
                pod,
                now=format_time(self._clock.now()),
                started=run is not None or status.get("phase") == "Running",
            )
            await self.ctx.client.update(kinds.PODS, updated, subresource="status")
            log.log(
                V2,
                "node %s: stopped pod %s (%s)",
                self.ctx.node_name,
                meta.key(pod),
                updated["status"]["phase"],
            )
        if (pod.get("metadata") or {}).get("deletionGracePeriodSeconds") == 0:
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

    @property
    def running_pods(self) -> list[PodKey]:
        return [run.key for run in self._runs.values()]


def _prepared_message(claims: list[PreparedClaim]) -> str:
    parts = [
        f"{meta.name(c.claim)} ({', '.join(c.devices) if c.devices else 'no devices'})"
        for c in claims
    ]
    return "Prepared resource claims: " + "; ".join(parts)
