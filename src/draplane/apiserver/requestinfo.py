"""Parsing a REST path (`/api/v1/namespaces/ns/pods/p/status`) into what it addresses.

Paths follow kube-apiserver: `/api/v1/...` for the core group, `/apis/<group>/<version>/...`
otherwise; `namespaces/<ns>/<resource>[/<name>[/<subresource>]]` for namespaced kinds,
`<resource>[/<name>[/<subresource>]]` for cluster-scoped kinds and all-namespace lists. The
legacy `/watch/` prefix turns a GET into a watch. The pod subresources a kubelet serves
(exec, attach, portforward, proxy) are a 400 Status saying the node is simulated; `log` is
served (`podlogs`). Anything
else is a 404 Status.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from draplane.api import errors, kinds, versions
from draplane.api.auth import UserInfo
from draplane.api.catalog import Catalog
from draplane.api.kinds import ResourceType

# What the request path learns, stored on the aiohttp request for the middleware.
USER_KEY = web.RequestKey("user", UserInfo)
VERB_KEY = web.RequestKey("verb", str)
"""Metrics verb: GET, LIST, WATCH, POST, PUT, PATCH, DELETE, DELETECOLLECTION."""
RESOURCE_KEY = web.RequestKey("resource", str)

# Methods each kind of path accepts; others are 405.
_COLLECTION = frozenset({"GET", "POST", "DELETE"})
_ITEM = frozenset({"GET", "PUT", "PATCH", "DELETE"})
_SUBRESOURCE_METHODS = {
    "status": frozenset({"GET", "PUT", "PATCH"}),
    "binding": frozenset({"POST"}),
    "token": frozenset({"POST"}),
    "finalize": frozenset({"PUT"}),
    "scale": frozenset({"GET", "PUT", "PATCH"}),
}

# Pod subresources kube-apiserver forwards to the pod's kubelet: simulated nodes run no kubelet
# server and no containers, so each is refused with a message saying so.
_KUBELET_SUBRESOURCES = {
    "exec": "exec (kubectl exec)",
    "attach": "attach (kubectl attach)",
    "portforward": "port forwarding (kubectl port-forward)",
    "proxy": "proxying to the pod",
}


@dataclass(frozen=True)
class RequestInfo:
    rt: ResourceType
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    watch: bool = False
    """The path used the legacy /watch/ prefix."""

    @property
    def is_collection(self) -> bool:
        return not self.name

    def allowed_methods(self) -> frozenset[str]:
        if self.watch:
            return frozenset({"GET"})  # only GET is a watch
        if self.subresource:
            return _SUBRESOURCE_METHODS.get(self.subresource, frozenset({"GET"}))
        if self.name:
            return _ITEM
        if self.rt.namespaced and not self.namespace:
            return frozenset({"GET"})
        return _COLLECTION


INFO_KEY = web.RequestKey("info", RequestInfo)
"""The resource request's parsed path (for the request metrics' labels)."""


def _not_found() -> errors.StatusError:
    return errors.StatusError(404, "NotFound", "the server could not find the requested resource")


def _served_elsewhere(
    group: str, version: str, resource: str, mode: versions.Mode
) -> errors.StatusError:
    """The 404 for a kind this server's Kubernetes version does not serve; when the other mode
    serves it (classic DRA's resource.k8s.io/v1alpha2 sent to a 1.36 server, v1 DRA to a 1.28
    one), the message says so and names the flag."""
    others = [
        m
        for m in versions.MODES.values()
        if m is not mode
        and any((r.group, r.version, r.resource) == (group, version, resource) for r in m.served)
    ]
    if not others:
        return _not_found()
    other = others[0]
    gv = f"{group}/{version}" if group else version
    return errors.StatusError(
        404,
        "NotFound",
        f"the server could not find the requested resource: this server runs Kubernetes "
        f"{mode.name} ({mode.dra.value}), which does not serve {gv} {resource}; {gv} is "
        f"{other.dra.value}, served by draplane started with --kubernetes-version {other.name}",
    )


def parse(group: str, version: str, tail: str, catalog: Catalog | None = None) -> RequestInfo:
    """`tail` is the path after `/api/v1/` or `/apis/<group>/<version>/`; kinds are looked up
    in `catalog` (the built-in kinds only when None)."""
    parts = [p for p in tail.split("/") if p]
    watch = bool(parts) and parts[0] == "watch"
    if watch:
        parts = parts[1:]
    if not parts:
        raise _not_found()
    namespace = ""
    if parts[0] == "namespaces" and len(parts) >= 3:
        sub_of_namespace = len(parts) == 3 and parts[2] in kinds.NAMESPACES.subresources
        if group == "" and sub_of_namespace:
            return _info(group, version, ["namespaces", parts[1], parts[2]], "", watch, catalog)
        namespace, parts = parts[1], parts[2:]
    return _info(group, version, parts, namespace, watch, catalog)


def _info(
    group: str,
    version: str,
    parts: list[str],
    namespace: str,
    watch: bool,
    catalog: Catalog | None,
) -> RequestInfo:
    if catalog is not None:
        rt = catalog.lookup(group, version, parts[0])
    else:
        rt = kinds.lookup(group, version, parts[0])
    if rt is kinds.PODS and namespace and len(parts) >= 3 and parts[2] in _KUBELET_SUBRESOURCES:
        raise errors.bad_request(
            f'pod "{parts[1]}" runs on a simulated node, which serves no '
            f"{_KUBELET_SUBRESOURCES[parts[2]]} yet: draplane runs no kubelet server or "
            "container runtime"
        )
    if rt is None and catalog is not None:
        raise _served_elsewhere(group, version, parts[0], catalog.mode)
    if rt is None or len(parts) > 3:
        raise _not_found()
    if namespace and not rt.namespaced:
        raise _not_found()
    name = parts[1] if len(parts) > 1 else ""
    subresource = parts[2] if len(parts) > 2 else ""
    if subresource and subresource not in rt.subresources:
        raise _not_found()
    if rt.namespaced and name and not namespace:
        raise _not_found()
    return RequestInfo(rt, namespace, name, subresource, watch)
