"""Lease-based leader election (coordination.k8s.io/v1), as client-go's leaderelection.

Candidates try to take or renew a Lease every `retry_period`; a lease held by another identity is
taken over only when its record has not changed for `lease_duration` on our own clock (no clock
skew between replicas matters). A leader that cannot renew within `renew_deadline` (an attempt
that hangs counts as failed once the deadline passes) steps down, before its lease can expire
for the others: its work is cancelled and `run` raises `LeaderElectionLost`, on which
components exit as Kubernetes components do. `leader_election_master_status{name}` is 1 while
leading.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import uuid
from collections.abc import Awaitable, Callable

from prometheus_client import CollectorRegistry, Gauge

from draplane.api.errors import StatusError, is_not_found
from draplane.api.kinds import LEASES
from draplane.api.meta import Obj, deep_copy
from draplane.client.interface import Client
from draplane.clock import REAL_CLOCK, Clock, format_micro_time

log = logging.getLogger(__name__)


class LeaderElectionLost(Exception):
    """The leader could not renew its lease before the renew deadline."""


def default_identity() -> str:
    """hostname + "_" + a random UUID, as kube components do."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class LeaderElector:
    def __init__(
        self,
        client: Client,
        *,
        lease_name: str,
        namespace: str = "kube-system",
        identity: str = "",
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        release_on_cancel: bool = True,
        clock: Clock = REAL_CLOCK,
        metrics: CollectorRegistry | None = None,
    ) -> None:
        if not lease_duration > renew_deadline > 1.2 * retry_period > 0:
            raise ValueError(
                "leader election needs leaseDuration > renewDeadline > 1.2 * retryPeriod > 0"
            )
        self._client = client
        self.lease_name = lease_name
        self.namespace = namespace
        self.identity = identity or default_identity()
        self._lease_duration = lease_duration
        self._renew_deadline = renew_deadline
        self._retry_period = retry_period
        self._release_on_cancel = release_on_cancel
        self._clock = clock
        self._is_leader = False
        # The record we last saw and when (our monotonic clock) it last changed.
        self._observed: tuple[str, str] | None = None
        self._observed_at = 0.0
        self._status: Gauge | None = None
        if metrics is not None:
            self._status = Gauge(
                "leader_election_master_status",
                "Gauge of if the reporting system is master of the relevant lease, 0 indicates "
                "backup, 1 indicates master. 'name' is the string used to identify the lease.",
                ["name"],
                registry=metrics,
            )
            self._status.labels(lease_name).set(0)

    def _set_leader(self, leading: bool) -> None:
        self._is_leader = leading
        if self._status is not None:
            self._status.labels(self.lease_name).set(1 if leading else 0)

    @property
    def is_leader(self) -> bool:
        return self._is_leader

    async def run(self, on_started_leading: Callable[[], Awaitable[None]]) -> None:
        """Wait to be leader, then run `on_started_leading` while renewing. Returns when the
        callback returns, raises what it raises, and raises `LeaderElectionLost` when the
        lease could not be renewed (the callback is cancelled first)."""
        await self._acquire()
        leading = asyncio.ensure_future(on_started_leading())
        renewing = asyncio.ensure_future(self._renew_until_lost())
        try:
            await asyncio.wait((leading, renewing), return_when=asyncio.FIRST_COMPLETED)
        finally:
            renewing.cancel()
            leading.cancel()
            await asyncio.gather(renewing, leading, return_exceptions=True)
            self._set_leader(False)
            if self._release_on_cancel:
                await self._within(self._release(), self._retry_period)
        if leading.done() and not leading.cancelled():
            failure = leading.exception()
            if failure is not None:
                raise failure
        if renewing.done() and not renewing.cancelled():
            log.error("leaderelection lost: %s is no longer leader", self.identity)
            raise LeaderElectionLost(
                f"leaderelection lost: {self.identity} could not renew lease "
                f"{self.namespace}/{self.lease_name} within {self._renew_deadline:g}s"
            )

    async def _acquire(self) -> None:
        while not await self._try_acquire_or_renew():
            await self._clock.sleep(self._retry_period)
        self._set_leader(True)
        log.info(
            "successfully acquired lease %s/%s as %s",
            self.namespace,
            self.lease_name,
            self.identity,
        )

    async def _renew_until_lost(self) -> None:
        last_renew = self._clock.monotonic()
        while True:
            await self._clock.sleep(self._retry_period)
            left = last_renew + self._renew_deadline - self._clock.monotonic()
            if await self._within(self._try_acquire_or_renew(), left):
                last_renew = self._clock.monotonic()
            elif self._clock.monotonic() - last_renew >= self._renew_deadline:
                self._set_leader(False)
                return

    async def _within(self, attempt: Awaitable[bool], seconds: float) -> bool:
        """The attempt's result, or False when it takes longer than `seconds` on our clock."""
        task = asyncio.ensure_future(attempt)
        timer = asyncio.ensure_future(self._clock.sleep(max(seconds, 0.0)))
        try:
            await asyncio.wait((task, timer), return_when=asyncio.FIRST_COMPLETED)
        finally:
            timer.cancel()
            if not task.done():
                task.cancel()
            await asyncio.gather(task, timer, return_exceptions=True)
        return task.done() and not task.cancelled() and task.exception() is None and task.result()

    async def _try_acquire_or_renew(self) -> bool:
        now = format_micro_time(self._clock.now())
        try:
            lease = await self._client.get(LEASES, self.lease_name, self.namespace)
        except StatusError as err:
            if not is_not_found(err):
                log.warning("error retrieving lease %s: %s", self.lease_name, err)
                return False
            return await self._create(now)
        except Exception as err:
            log.warning("error retrieving lease %s: %s", self.lease_name, err)
            return False
        spec: Obj = lease.get("spec") or {}
        holder = str(spec.get("holderIdentity") or "")
        record = (holder, str(spec.get("renewTime") or ""))
        mono = self._clock.monotonic()
        if record != self._observed:
            self._observed, self._observed_at = record, mono
        if holder and holder != self.identity and mono < self._observed_at + self._lease_duration:
            return False
        updated = deep_copy(lease)
        new_spec: Obj = updated.setdefault("spec", {})
        if holder != self.identity:
            new_spec["acquireTime"] = now
            new_spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
        new_spec["holderIdentity"] = self.identity
        new_spec["leaseDurationSeconds"] = int(self._lease_duration)
        new_spec["renewTime"] = now
        try:
            result = await self._client.update(LEASES, updated)
        except Exception as err:
            log.info("failed to update lease %s: %s", self.lease_name, err)
            return False
        self._observe(result)
        return True

    async def _create(self, now: str) -> bool:
        lease: Obj = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.lease_name, "namespace": self.namespace},
            "spec": {
                "holderIdentity": self.identity,
                "leaseDurationSeconds": int(self._lease_duration),
                "acquireTime": now,
                "renewTime": now,
                "leaseTransitions": 0,
            },
        }
        try:
            result = await self._client.create(LEASES, lease, self.namespace)
        except Exception as err:
            log.info("failed to create lease %s: %s", self.lease_name, err)
            return False
        self._observe(result)
        return True

    def _observe(self, lease: Obj) -> None:
        spec: Obj = lease.get("spec") or {}
        self._observed = (str(spec.get("holderIdentity") or ""), str(spec.get("renewTime") or ""))
        self._observed_at = self._clock.monotonic()

    async def _release(self) -> bool:
        """Give the lease up so another candidate need not wait for it to expire."""
        try:
            lease = await self._client.get(LEASES, self.lease_name, self.namespace)
            spec: Obj = lease.get("spec") or {}
            if spec.get("holderIdentity") != self.identity:
                return False
            updated = deep_copy(lease)
            updated["spec"]["holderIdentity"] = ""
            updated["spec"]["leaseDurationSeconds"] = 1
            updated["spec"]["renewTime"] = format_micro_time(self._clock.now())
            await self._client.update(LEASES, updated)
        except Exception as err:
            log.info("failed to release lease %s: %s", self.lease_name, err)
            return False
        return True
