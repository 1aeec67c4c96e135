"""Subresource writes that are not plain merges: `pods/binding` (assign a pod to a node once, as
the scheduler's binder does)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from draplane.api.auth import UserInfo
from draplane.api.meta import Obj
from draplane.api.request import Request
from draplane.apiserver.binding import BINDING_SUCCESS, binding_mutation
from draplane.clock import format_time

if TYPE_CHECKING:
    from draplane.apiserver.registry import Registry


async def bind_pod(registry: Registry, user: UserInfo, req: Request) -> Obj:
    body = req.body if isinstance(req.body, dict) else {}
    bind_name, mutate = binding_mutation(body, req.name, format_time(registry.clock.now()))
    target = Request("update", req.rt, req.namespace, bind_name, "binding")
    await registry.writer.guaranteed_update(user, target, mutate)
    return BINDING_SUCCESS
