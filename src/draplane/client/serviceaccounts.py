"""Service-account tokens asked for through the API: `request_token` creates the account when
it is missing (as applying its manifest would) and POSTs a TokenRequest to its `token`
subresource, optionally bound to an object. A token bound to a Node carries upstream's
`kubernetes.io/node` claims, so the user it authenticates as has the extra
`authentication.kubernetes.io/node-name` (what `resourceclaims/driver`'s `associated-node`
check reads), and it stops being valid once that Node is deleted.

    token = await request_token(admin, "kube-system", "driver.example.com-kubelet-plugin",
                                bound_to=node)
"""

from __future__ import annotations

from draplane.api import errors, kinds, meta
from draplane.api.meta import Obj
from draplane.client.interface import Client

YEAR_SECONDS = 365 * 24 * 60 * 60
"""What `request_token` asks for by default: the lifetime kube-apiserver extends projected
tokens to (`--service-account-extend-token-expiration`); nothing here refreshes a token."""


def token_request(*, expiration_seconds: int, bound_to: Obj | None = None) -> Obj:
    """An authentication.k8s.io/v1 TokenRequest, bound to `bound_to` (a Pod, Secret or Node)
    by name and uid when given."""
    spec: Obj = {"expirationSeconds": expiration_seconds}
    if bound_to is not None:
        spec["boundObjectRef"] = {
            "apiVersion": str(bound_to.get("apiVersion") or "v1"),
            "kind": str(bound_to.get("kind") or ""),
            "name": meta.name(bound_to),
            "uid": meta.uid(bound_to),
        }
    return {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec}


async def ensure_service_account(client: Client, namespace: str, name: str) -> None:
    """Service account `namespace/name`, created unless it exists: a GET, and a create only on
    NotFound (an AlreadyExists from a concurrent creator counts as found), as
    kube-controller-manager's service-account client builder does (getOrCreateServiceAccount),
    so a credential that may read service accounts but not create them works while the account
    exists; `StatusError` when the API server refuses."""
    try:
        await client.get(kinds.SERVICE_ACCOUNTS, name, namespace)
        return
    except errors.StatusError as err:
        if not errors.is_not_found(err):
            raise
    account = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": name, "namespace": namespace},
    }
    try:
        await client.create(kinds.SERVICE_ACCOUNTS, account, namespace)
    except errors.StatusError as err:
        if not errors.is_already_exists(err):
            raise


async def request_token(
    client: Client,
    namespace: str,
    name: str,
    *,
    bound_to: Obj | None = None,
    expiration_seconds: int = YEAR_SECONDS,
    create_account: bool = True,
) -> str:
    """A token of service account `namespace/name` (created if missing, unless the caller made
    sure of it: `create_account=False`), asked for as `client`'s user; `StatusError` when the
    API server refuses."""
    if create_account:
        await ensure_service_account(client, namespace, name)
    answer = await client.create(
        kinds.SERVICE_ACCOUNTS,
        token_request(expiration_seconds=expiration_seconds, bound_to=bound_to),
        namespace,
        subresource="token",
        name=name,
    )
    return str(answer["status"]["token"])
