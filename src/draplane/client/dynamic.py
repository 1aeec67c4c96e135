"""Naming a resource by group, version and resource (client-go's dynamic client and REST
mapper): built-in kinds from `draplane.api.kinds`, custom resources from their
CustomResourceDefinition `<resource>.<group>`, read through the client."""

from __future__ import annotations

from draplane.api import crd, errors, kinds
from draplane.api.kinds import ResourceType
from draplane.client.interface import Client


async def resource_type(client: Client, group: str, version: str, resource: str) -> ResourceType:
    """The served type of `group/version/resource`; 404 NotFound when nothing serves it."""
    builtin = kinds.lookup(group, version, resource)
    if builtin is not None:
        return builtin
    obj = await client.get(kinds.CUSTOM_RESOURCE_DEFINITIONS, f"{resource}.{group}")
    rt = crd.resource_type(obj, version) if crd.is_established(obj) else None
    if rt is None or rt.resource != resource:
        raise errors.StatusError(
            404, "NotFound", "the server could not find the requested resource"
        )
    return rt
