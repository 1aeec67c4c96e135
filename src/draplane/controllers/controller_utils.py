"""Machinery the workload controllers share (pkg/controller/controller_utils.go): pod
predicates, pods from templates, name hashes, expectations and slow-start batches.

The controller reference manager (adoption and release) is in `controllerref.py`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.clock import parse_time

SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
"""k8s.io/apimachinery/pkg/util/rand: no vowels, no confusable characters."""
EXPECTATIONS_TIMEOUT = 5 * 60.0
"""Expectations older than this count as satisfied (ExpectationsTimeout)."""
SLOW_START_INITIAL_BATCH_SIZE = 1

_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193


def fnv32a(data: bytes, value: int = _FNV32_OFFSET) -> int:
    """FNV-1a, 32 bits (Go's hash/fnv New32a); `value` continues an earlier sum."""
    for byte in data:
        value = ((value ^ byte) * _FNV32_PRIME) & 0xFFFFFFFF
    return value


def safe_encode_string(text: str) -> str:
    """rand.SafeEncodeString: each character mapped into `SAFE_ALPHABET`."""
    return "".join(SAFE_ALPHABET[ord(c) % len(SAFE_ALPHABET)] for c in text)


def _pod_condition(pod: Obj, type_: str) -> Obj | None:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == type_:
            return cond  # type: ignore[no-any-return]
    return None


def is_pod_ready(pod: Obj) -> bool:
    """Condition Ready is True (the phase is not checked)."""
    cond = _pod_condition(pod, "Ready")
    return cond is not None and cond.get("status") == "True"


def ready_since(pod: Obj) -> datetime | None:
    cond = _pod_condition(pod, "Ready")
    if cond is None or cond.get("status") != "True" or not cond.get("lastTransitionTime"):
        return None
    return parse_time(str(cond["lastTransitionTime"]))


def is_pod_available(pod: Obj, min_ready_seconds: int, now: datetime) -> bool:
    """Ready, and Ready for at least `min_ready_seconds` (podutil.IsPodAvailable)."""
    if not is_pod_ready(pod):
        return False
    if min_ready_seconds <= 0:
        return True
    since = ready_since(pod)
    return since is not None and since + timedelta(seconds=min_ready_seconds) <= now


def pod_phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def is_pod_active(pod: Obj) -> bool:
    """Not Succeeded, not Failed, and not being deleted."""
    return pod_phase(pod) not in ("Succeeded", "Failed") and not meta.deletion_timestamp(pod)


def is_pod_terminating(pod: Obj) -> bool:
    return bool(meta.deletion_timestamp(pod)) and pod_phase(pod) not in ("Succeeded", "Failed")


def pod_from_template(template: Obj, owner: Obj) -> Obj:
    """A pod for `owner` (GetPodFromTemplate): the template's labels, annotations, finalizers
    and spec, `generateName: <owner>-` and a controller reference that blocks deletion."""
    tmd = template.get("metadata") or {}
    md: Obj = {
        "generateName": f"{meta.name(owner)}-",
        "namespace": meta.namespace(owner),
        "ownerReferences": [meta.owner_reference(owner, block_owner_deletion=True)],
    }
    for key in ("labels", "annotations", "finalizers"):
        if tmd.get(key):
            md[key] = meta.deep_copy(tmd[key]) if not isinstance(tmd[key], str) else tmd[key]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": md,
        "spec": meta.deep_copy(template.get("spec") or {}),
    }


@dataclass
class _Expectation:
    adds: int = 0
    deletes: set[str] = field(default_factory=set)
    timestamp: float = 0.0


class Expectations:
    """Creates and deletes a controller issued and has not yet seen in its informer
    (UIDTrackingControllerExpectations): creates are counted, deletes tracked by pod key, so
    a pod that is first marked for deletion and then removed confirms once."""

    def __init__(self, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._monotonic = monotonic
        self._records: dict[str, _Expectation] = {}

    def satisfied(self, key: str) -> bool:
        record = self._records.get(key)
        if record is None:
            return True
        if record.adds <= 0 and not record.deletes:
            return True
        return self._monotonic() - record.timestamp > EXPECTATIONS_TIMEOUT

    def expect_creations(self, key: str, count: int) -> None:
        self._records[key] = _Expectation(adds=count, timestamp=self._monotonic())

    def expect_deletions(self, key: str, pod_keys: list[str]) -> None:
        self._records[key] = _Expectation(deletes=set(pod_keys), timestamp=self._monotonic())

    def creation_observed(self, key: str, count: int = 1) -> None:
        record = self._records.get(key)
        if record is not None:
            record.adds -= count

    def deletion_observed(self, key: str, pod_key: str) -> None:
        record = self._records.get(key)
        if record is not None:
            record.deletes.discard(pod_key)

    def delete(self, key: str) -> None:
        self._records.pop(key, None)


async def slow_start_batch(
    count: int, fn: Callable[[], Awaitable[None]], *, initial: int = SLOW_START_INITIAL_BATCH_SIZE
) -> tuple[int, Exception | None]:
    """Call `fn` `count` times in batches of 1, 2, 4...; stop after the first batch with an
    error. Returns the successes and the first error."""
    remaining, successes, batch = count, 0, min(count, initial)
    while batch > 0:
        results = await asyncio.gather(*(fn() for _ in range(batch)), return_exceptions=True)
        errors = [r for r in results if isinstance(r, Exception)]
        successes += batch - len(errors)
        if errors:
            return successes, errors[0]
        remaining -= batch
        batch = min(2 * batch, remaining)
    return successes, None


def scaled_value(value: int | str | None, total: int, *, round_up: bool, default: str) -> int:
    """`value` (an int or "N%") against `total`; percentages round up or down
    (intstr.GetScaledValueFromIntOrPercent)."""
    if value is None:
        value = default
    if isinstance(value, int):
        return value
    text = str(value)
    if not text.endswith("%"):
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"invalid value for IntOrString: invalid value {text!r}") from None
    percent = int(text[:-1])
    scaled = percent * total
    return -(-scaled // 100) if round_up else scaled // 100
