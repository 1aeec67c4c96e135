"""Which Kubernetes version (`draplane.api.versions` mode) an API server serves: its `/version`
document (gitVersion `v1.28.0` or `v1.36.0`, `versions.from_version_info`), asked over the
client's HTTP transport as any user may (system:public-info-viewer).

    mode = await resolve_mode(client, args.kubernetes_version)   # the flag wins when given

ValueError when the server reports a version draplane does not serve.
"""

from __future__ import annotations

from draplane.api import versions
from draplane.client.interface import Client
from draplane.client.requestlog import RequestLoggingTransport
from draplane.client.rest import HTTPTransport

VERSION_PATH = "/version"


async def server_mode(client: Client) -> versions.Mode:
    transport = client.transport
    if isinstance(transport, RequestLoggingTransport):
        transport = transport.inner
    if not isinstance(transport, HTTPTransport):
        raise TypeError(f"{VERSION_PATH} is asked over HTTP, not {type(transport).__name__}")
    return versions.from_version_info(await transport.request("GET", VERSION_PATH))


async def resolve_mode(client: Client, flag: versions.Mode | None) -> versions.Mode:
    """`flag` when given (`--kubernetes-version`), else what the API server's `/version` says."""
    return flag if flag is not None else await server_mode(client)
