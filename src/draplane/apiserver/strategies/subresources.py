"""Subresource writes that are not plain merges: `pods/binding` (assign a pod to a node once, as
the scheduler's binder does) and `serviceaccounts/token` (a TokenRequest: a signed token, once
the validating admission, NodeRestriction, has let the request through)."""

from __future__ import annotations

from draplane.api import errors
from draplane.api.auth import UserInfo
from draplane.api.meta import Obj
from draplane.api.request import Request
from draplane.apiserver.admission import AdmissionAttributes
from draplane.apiserver.authentication import tokenrequest
from draplane.apiserver.binding import BINDING_SUCCESS, binding_mutation
from draplane.apiserver.strategies.context import ServerContext
from draplane.clock import format_time


async def bind_pod(registry: ServerContext, user: UserInfo, req: Request) -> Obj:
    body = req.body if isinstance(req.body, dict) else {}
    bind_name, mutate = binding_mutation(body, req.name, format_time(registry.clock.now()))
    target = Request("update", req.rt, req.namespace, bind_name, "binding")
    await registry.writer.guaranteed_update(user, target, mutate)
    return BINDING_SUCCESS


async def request_token(registry: ServerContext, user: UserInfo, req: Request) -> Obj:
    if registry.token_issuer is None:
        raise errors.StatusError(
            503, "ServiceUnavailable", "service account tokens are not configured"
        )

    async def admit(token_request: Obj) -> None:
        await registry.admission.validate(
            AdmissionAttributes(
                user,
                "CREATE",
                req.rt,
                req.namespace,
                req.name,
                token_request,
                subresource="token",
            )
        )

    response, _warnings = await tokenrequest.create_token(
        req.body,
        req.namespace,
        req.name,
        registry.lookup,
        registry.token_issuer,
        registry.clock.now(),
        admit,
    )
    return response
