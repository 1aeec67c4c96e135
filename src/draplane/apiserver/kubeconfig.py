"""Kubeconfig files the API server writes: one cluster, one token user, context `draplane`.

`DIR/kubeconfig` is the admin's; `kubeconfig_for_user` builds one for any user (adding a token
to the token file when needed) from the server URL recorded in the admin kubeconfig, or from
a comma list of API server replicas' URLs (the first as `server`, all of them in the
`draplane.io/servers` cluster extension that `RESTClient` fails over along).
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import yaml

from draplane.apiserver.authn import ensure_user_token
from draplane.apiserver.certs import cert_paths
from draplane.client.kubeconfig import SERVERS_EXTENSION, split_servers
from draplane.storage import files

CONTEXT = "draplane"
KUBECONFIG_FILE = "kubeconfig"


def build_kubeconfig(*, server: str, ca_pem: bytes, user: str, token: str) -> dict[str, Any]:
    """`server` is one URL or a comma list of replicas' URLs."""
    servers = split_servers(server)
    cluster: dict[str, Any] = {
        "server": servers[0] if servers else server,
        "certificate-authority-data": base64.b64encode(ca_pem).decode(),
    }
    if len(servers) > 1:
        cluster["extensions"] = [
            {"name": SERVERS_EXTENSION, "extension": {"servers": list(servers)}}
        ]
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": CONTEXT,
                "cluster": cluster,
            }
        ],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": CONTEXT, "context": {"cluster": CONTEXT, "user": user}}],
        "current-context": CONTEXT,
        "preferences": {},
    }


def dump_kubeconfig(config: dict[str, Any]) -> str:
    return yaml.safe_dump(config, sort_keys=False)


def write_kubeconfig(path: Path, config: dict[str, Any]) -> None:
    """Replace `path` atomically (0600); `storage.files.DiskFullError` when the disk is full,
    and no temporary file stays behind on any failure."""
    files.write_private(path, dump_kubeconfig(config))


def recorded_server(data_dir: Path) -> str:
    """The server URL in `DIR/kubeconfig`; raises FileNotFoundError before the first start."""
    config = yaml.safe_load((data_dir / KUBECONFIG_FILE).read_text())
    return str(config["clusters"][0]["cluster"]["server"])


def kubeconfig_for_user(
    data_dir: Path, user: str, *, groups: tuple[str, ...] | None = None, server: str = ""
) -> dict[str, Any]:
    token = ensure_user_token(data_dir, user, groups)
    return build_kubeconfig(
        server=server or recorded_server(data_dir),
        ca_pem=cert_paths(data_dir).ca_cert.read_bytes(),
        user=user,
        token=token,
    )
