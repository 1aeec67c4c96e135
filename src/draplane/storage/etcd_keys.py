"""The etcd key layout, as kube-apiserver lays out its keys.

`<prefix>/<resource prefix>/<namespace>/<name>` for namespaced objects and
`<prefix>/<resource prefix>/<name>` for cluster-scoped ones, `<prefix>` being `--etcd-prefix`
(default `/registry`). The resource prefix is the lower-case resource name, whatever its API
group (`/registry/resourceclaims/default/c`, `/registry/clusterroles/admin`), except for the
kinds kube-apiserver stores under an older name (`nodes` under `minions`, `services` under
`services/specs`). A resource key the API does not serve (a test's) is laid out under the key
itself (`<group>/<resource>`, as kube-apiserver stores custom resources).
"""

from __future__ import annotations

from draplane.api import kinds

UPSTREAM_PREFIXES = {
    "nodes": "minions",
    "services": "services/specs",
    "endpoints": "services/endpoints",
    "replicationcontrollers": "controllers",
    "networking.k8s.io/ingresses": "ingress",
}
"""Resource key -> resource prefix where kube-apiserver does not use the resource name."""


def prefix_end(prefix: bytes) -> bytes:
    """The end of the etcd range of keys starting with `prefix`."""
    return prefix[:-1] + bytes([prefix[-1] + 1])


class KeyLayout:
    def __init__(self, prefix: str = "/registry") -> None:
        self.prefix = "/" + prefix.strip("/")
        self.root = (self.prefix + "/").encode()
        self._paths: dict[str, str] = {}
        self._resources: dict[str, str] = {}
        for rt in kinds.STORED:
            self._register(rt.key, UPSTREAM_PREFIXES.get(rt.key, rt.resource))

    def _register(self, resource: str, path: str) -> str:
        self._paths[resource] = path
        self._resources[path] = resource
        return path

    def path(self, resource: str) -> str:
        path = self._paths.get(resource)
        return self._register(resource, resource) if path is None else path

    def key(self, resource: str, namespace: str, name: str) -> bytes:
        middle = f"{namespace}/{name}" if namespace else name
        return f"{self.prefix}/{self.path(resource)}/{middle}".encode()

    def range(self, resource: str, namespace: str | None) -> tuple[bytes, bytes]:
        """[start, end) of the keys of `resource` (in `namespace`, or in all when None)."""
        start = f"{self.prefix}/{self.path(resource)}/"
        if namespace:
            start += namespace + "/"
        raw = start.encode()
        return raw, prefix_end(raw)

    def parse(self, key: bytes) -> tuple[str, str, str] | None:
        """(resource, namespace, name) of a key under the prefix; None for another key."""
        if not key.startswith(self.root):
            return None
        parts = key[len(self.root) :].decode().split("/")
        for n in (2, 1):
            resource = self._resources.get("/".join(parts[:n]))
            rest = parts[n:]
            if resource is not None and 1 <= len(rest) <= 2:
                return (resource, rest[0], rest[1]) if len(rest) == 2 else (resource, "", rest[0])
        return None
