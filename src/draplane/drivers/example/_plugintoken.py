"""The example kubelet plugin's own credential on a node: a token of its service account
`kube-system/<driver>-kubelet-plugin` bound to the Node, so the API server's
`resourceclaims/driver` check (`associated-node:update`) lets it write `status.devices` of the
claims allocated on that node only.

Upstream the plugin runs as a DaemonSet pod and the kubelet mounts its projected token (bound to
the pod, carrying the pod's node); draplane runs no plugin pods, so `status_clients` asks, as
`requester` (an identity that may create the account and its tokens), for a TokenRequest bound
to the Node object, which carries the same `kubernetes.io/node` claims.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from draplane.api import auth, errors, meta
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.client.serviceaccounts import request_token
from draplane.drivers.example._driver import DRIVER_NAME

log = logging.getLogger(__name__)

PLUGIN_NAMESPACE = "kube-system"

StatusClientSource = Callable[[Obj], Awaitable[Client | None]]
"""The Node -> the driver's client on that node, or None when it cannot have one."""


def plugin_account(driver_name: str) -> str:
    return f"{driver_name}-kubelet-plugin"


def status_clients(
    requester: Client,
    client_for_token: Callable[[str, str], Client],
    driver_name: str = DRIVER_NAME,
) -> StatusClientSource:
    """Per node: a token bound to the Node, asked for as `requester`, and
    `client_for_token(user name, token)` over it. A refusal is logged and gives None (the plugin
    then tries its writes as the node, which the API server refuses)."""
    account = plugin_account(driver_name)
    user = auth.service_account_user(PLUGIN_NAMESPACE, account).name
    # The account is created by the first node that asks; the others only ask for a token,
    # and create it again only when it is gone.
    created = False

    async def token_for(bound: Obj) -> str:
        nonlocal created
        try:
            token = await request_token(
                requester, PLUGIN_NAMESPACE, account, bound_to=bound, create_account=not created
            )
        except errors.StatusError as err:
            if not (created and errors.is_not_found(err)):
                raise
            created = False
            return await token_for(bound)
        created = True
        return token

    async def for_node(node: Obj) -> Client | None:
        bound = {**node, "apiVersion": "v1", "kind": "Node"}
        try:
            token = await token_for(bound)
        except (errors.StatusError, OSError) as err:
            log.warning(
                "node %s: no token for %s/%s, status.devices will not be written: %s",
                meta.name(node),
                PLUGIN_NAMESPACE,
                account,
                err,
            )
            return None
        return client_for_token(user, token)

    return for_node
