"""Which Kubernetes version (`draplane.api.versions` mode) an API server serves, asked through
the ordinary client: a server that does not serve resource.k8s.io/v1 ResourceSlices (404) is a
1.28 one. A 403 still says the kind is served (the caller may not list it).

    mode = await resolve_mode(client, args.kubernetes_version)   # the flag wins when given
"""

from __future__ import annotations

from draplane.api import errors, kinds, versions
from draplane.client.interface import Client


async def server_mode(client: Client) -> versions.Mode:
    try:
        await client.list(kinds.RESOURCE_SLICES, limit=1)
    except errors.StatusError as err:
        if err.code == 404:
            return versions.CLASSIC
        if err.code != 403:
            raise
    return versions.STRUCTURED


async def resolve_mode(client: Client, flag: versions.Mode | None) -> versions.Mode:
    """`flag` when given (`--kubernetes-version`), else what the API server serves."""
    return flag if flag is not None else await server_mode(client)
