"""Loading a kubeconfig: current context -> server URL, TLS trust and bearer token.

Supports what draplane and kind/kwok-style files use: `certificate-authority-data` or
`certificate-authority`, `insecure-skip-tls-verify`, `token` or `tokenFile`, and client
certificates (`client-certificate[-data]`, `client-key[-data]`).

Several API server replicas: the cluster's `server` is the first, and the cluster extension
named `draplane.io/servers` (`extension: {servers: [URL, ...]}`, which kubectl keeps and ignores)
lists all of them, for `RESTClient`'s failover. `with_servers` sets them from a comma list (the
components' `--master` flag).
"""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

SERVERS_EXTENSION = "draplane.io/servers"


class KubeconfigError(ValueError):
    """The kubeconfig is missing, malformed or names something it does not define."""


def split_servers(urls: str) -> tuple[str, ...]:
    """`https://a:1,https://b:2` -> the URLs, without trailing slashes or empty entries."""
    servers = tuple(u.strip().rstrip("/") for u in urls.split(",") if u.strip())
    for url in servers:
        if not url.startswith(("https://", "http://")):
            raise KubeconfigError(f"server {url!r} is not an http(s) URL")
    return servers


def _extension_servers(cluster: dict[str, Any]) -> tuple[str, ...]:
    for entry in cluster.get("extensions") or []:
        if isinstance(entry, dict) and entry.get("name") == SERVERS_EXTENSION:
            ext = entry.get("extension")
            urls = ext.get("servers") if isinstance(ext, dict) else None
            if isinstance(urls, list):
                return split_servers(",".join(str(u) for u in urls))
    return ()


@dataclass(frozen=True)
class KubeConfig:
    server: str
    user: str
    token: str = ""
    ca_pem: bytes | None = None
    insecure: bool = False
    client_cert_pem: bytes | None = None
    client_key_pem: bytes | None = None
    servers: tuple[str, ...] = ()
    """Every API server URL to try, in order (empty: `server` only)."""

    @property
    def endpoints(self) -> tuple[str, ...]:
        return self.servers or (self.server,)

    def with_servers(self, urls: str) -> KubeConfig:
        """This config against the comma-separated `urls` (the first becomes `server`)."""
        servers = split_servers(urls)
        if not servers:
            raise KubeconfigError("no server URL given")
        return replace(self, server=servers[0], servers=servers)

    def ssl_context(self) -> ssl.SSLContext | bool:
        """What aiohttp's `ssl=` wants: a context for https, True for plain http."""
        if not any(url.startswith("https") for url in self.endpoints):
            return True
        if self.insecure:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        else:
            ctx = ssl.create_default_context(cadata=self.ca_pem.decode() if self.ca_pem else None)
        if self.client_cert_pem and self.client_key_pem:
            _load_client_cert(ctx, self.client_cert_pem, self.client_key_pem)
        return ctx


def _load_client_cert(ctx: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    # ssl can only load a chain from files.
    with tempfile.TemporaryDirectory() as tmp:
        cert_path, key_path = Path(tmp) / "c.crt", Path(tmp) / "c.key"
        cert_path.write_bytes(cert)
        key_path.write_bytes(key)
        ctx.load_cert_chain(str(cert_path), str(key_path))


def _named(entries: Any, name: str, what: str) -> dict[str, Any]:
    for entry in entries or []:
        if isinstance(entry, dict) and entry.get("name") == name:
            value = entry.get(what)
            return value if isinstance(value, dict) else {}
    raise KubeconfigError(f"kubeconfig has no {what} named {name!r}")


def _data_or_file(section: dict[str, Any], key: str, base: Path) -> bytes | None:
    if section.get(f"{key}-data"):
        return base64.b64decode(section[f"{key}-data"])
    if section.get(key):
        return (base / os.path.expanduser(str(section[key]))).read_bytes()
    return None


def parse_kubeconfig(doc: Any, *, base: Path, context: str = "") -> KubeConfig:
    """Resolve `context` (default: current-context) of a parsed kubeconfig document."""
    if not isinstance(doc, dict):
        raise KubeconfigError("kubeconfig is not a mapping")
    ctx_name = context or str(doc.get("current-context") or "")
    if not ctx_name:
        raise KubeconfigError("kubeconfig has no current-context")
    ctx = _named(doc.get("contexts"), ctx_name, "context")
    cluster = _named(doc.get("clusters"), str(ctx.get("cluster") or ""), "cluster")
    user_name = str(ctx.get("user") or "")
    user = _named(doc.get("users"), user_name, "user") if user_name else {}
    server = str(cluster.get("server") or "").rstrip("/")
    if not server:
        raise KubeconfigError(f"cluster {ctx.get('cluster')!r} has no server")
    token = str(user.get("token") or "")
    if not token and user.get("tokenFile"):
        token = (base / os.path.expanduser(user["tokenFile"])).read_text().strip()
    servers = _extension_servers(cluster)
    if servers and server not in servers:
        servers = (server, *servers)
    return KubeConfig(
        server=server,
        servers=servers,
        user=user_name,
        token=token,
        ca_pem=_data_or_file(cluster, "certificate-authority", base),
        insecure=bool(cluster.get("insecure-skip-tls-verify")),
        client_cert_pem=_data_or_file(user, "client-certificate", base),
        client_key_pem=_data_or_file(user, "client-key", base),
    )


def load_kubeconfig(path: str | Path, *, context: str = "") -> KubeConfig:
    p = Path(path)
    try:
        doc = yaml.safe_load(p.read_text())
    except (OSError, yaml.YAMLError) as err:
        raise KubeconfigError(f"cannot read kubeconfig {p}: {err}") from err
    return parse_kubeconfig(doc, base=p.parent, context=context)
