"""Auditing: the write counts the benchmark reads, and the audit log.

`Audit` counts how many writes each (verb, resource) pair made and how they ended (the benchmark
reads it to report API writes per pod). `AuditLog` writes kube-apiserver's audit.k8s.io/v1 Event
lines for `--audit-log-path`.
"""

from __future__ import annotations

import os
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from draplane.api import errors
from draplane.api.auth import UserInfo
from draplane.api.request import Request, resource_path
from draplane.clock import REAL_CLOCK, Clock, format_micro_time
from draplane.storage.errors import RevisionConflict


@dataclass
class Audit:
    writes: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(verb, resource[/subresource]) -> successful writes."""
    conflicts: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(verb, resource[/subresource]) -> writes rejected with 409 Conflict."""

    def record(self, verb: str, resource: str, *, conflict: bool = False) -> None:
        (self.conflicts if conflict else self.writes)[(verb, resource)] += 1

    @contextmanager
    def recording(self, verb: str, resource: str, subresource: str) -> Iterator[None]:
        """Count the write made inside the block, or its 409 Conflict."""
        key = f"{resource}/{subresource}" if subresource else resource
        try:
            yield
        except RevisionConflict:
            self.record(verb, key, conflict=True)
            raise
        except errors.StatusError as err:
            if errors.is_conflict(err):
                self.record(verb, key, conflict=True)
            raise
        self.record(verb, key)

    def snapshot(self) -> dict[str, int]:
        return {f"{verb} {resource}": n for (verb, resource), n in sorted(self.writes.items())}

    def reset(self) -> None:
        self.writes.clear()
        self.conflicts.clear()


class AuditLog:
    """`--audit-log-path`: one audit.k8s.io/v1 Event JSON line per request at level Metadata,
    stage ResponseComplete (user, verb, object reference, response code, the authorization
    decision and reason)."""

    def __init__(self, path: Path, *, clock: Clock = REAL_CLOCK) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(path, "ab", buffering=0)  # noqa: SIM115 (closed by close())
        os.chmod(path, 0o600)
        self._clock = clock

    def record(
        self,
        user: UserInfo,
        request: Request,
        code: int,
        *,
        received: str,
        decision: str,
        reason: str,
    ) -> None:
        rt = request.rt
        ref: dict[str, Any] = {"resource": rt.resource, "apiVersion": rt.version}
        if rt.group:
            ref["apiGroup"] = rt.group
        if request.namespace:
            ref["namespace"] = request.namespace
        name = request.name
        if not name and request.verb == "create" and isinstance(request.body, dict):
            md = request.body.get("metadata")
            name = str(md.get("name") or "") if isinstance(md, dict) else ""  # as LogRequestObject
        if name:
            ref["name"] = name
        if request.subresource:
            ref["subresource"] = request.subresource
        user_info: dict[str, Any] = {"username": user.name, "groups": list(user.groups)}
        if user.uid:
            user_info["uid"] = user.uid
        event: dict[str, Any] = {
            "kind": "Event",
            "apiVersion": "audit.k8s.io/v1",
            "level": "Metadata",
            "auditID": str(uuid.uuid4()),
            "stage": "ResponseComplete",
            "requestURI": request_uri(request),
            "verb": request.verb,
            "user": user_info,
            "objectRef": ref,
            "responseStatus": {"metadata": {}, "code": code},
            "requestReceivedTimestamp": received,
            "stageTimestamp": format_micro_time(self._clock.now()),
            "annotations": {
                "authorization.k8s.io/decision": decision,
                "authorization.k8s.io/reason": reason,
            },
        }
        self._file.write(orjson.dumps(event) + b"\n")

    def close(self) -> None:
        self._file.close()


def request_uri(request: Request) -> str:
    uri = resource_path(request.rt, request.namespace, request.name, request.subresource)
    return uri + "?watch=true" if request.verb == "watch" else uri
