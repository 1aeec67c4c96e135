"""Loading a kubeconfig: current context -> server URL, TLS trust and bearer token.

Supports what draplane and kind/kwok-style files use: `certificate-authority-data` or
`certificate-authority`, `insecure-skip-tls-verify`, `token` or `tokenFile`, and client
certificates (`client-certificate[-data]`, `client-key[-data]`).
"""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


class KubeconfigError(ValueError):
    """The kubeconfig is missing, malformed or names something it does not define."""


@dataclass(frozen=True)
class KubeConfig:
    server: str
    user: str
    token: str = ""
    ca_pem: bytes | None = None
    insecure: bool = False
    client_cert_pem: bytes | None = None
    client_key_pem: bytes | None = None

    def ssl_context(self) -> ssl.SSLContext | bool:
        """What aiohttp's `ssl=` wants: a context for https, True for plain http."""
        if not self.server.startswith("https"):
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
    return KubeConfig(
        server=server,
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
