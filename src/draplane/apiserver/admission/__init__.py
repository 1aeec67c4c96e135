"""Admission: plugins that see each write after authorization, before and after validation.

`AdmissionAttributes` is what a plugin sees (admission.Attributes): the user, the operation
(CREATE, UPDATE, DELETE), the kind, subresource, namespace and name, the new object (which
mutating plugins may change) and the stored one. The `Chain` runs the mutating plugins before the
strategy and validation, and the validating plugins after them; a plugin rejects a request by
raising a StatusError (403 Forbidden, as `forbidden()` builds it). Plugins in order:
NamespaceLifecycle, LimitRanger and ServiceAccount (mutating and validating), NodeRestriction,
ResourceQuota (validating).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from draplane.api import errors
from draplane.api.auth import UserInfo
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj

Operation = Literal["CREATE", "UPDATE", "DELETE"]


@dataclass(slots=True)
class AdmissionAttributes:
    user: UserInfo
    operation: Operation
    rt: ResourceType
    namespace: str
    name: str
    obj: Obj | None
    old: Obj | None = None
    subresource: str = ""
    dry_run: bool = False


class MutatingPlugin(Protocol):
    async def admit(self, a: AdmissionAttributes) -> None: ...


class ValidatingPlugin(Protocol):
    async def validate(self, a: AdmissionAttributes) -> None: ...


@dataclass
class Chain:
    mutating: list[MutatingPlugin] = field(default_factory=list)
    validating: list[ValidatingPlugin] = field(default_factory=list)

    async def admit(self, a: AdmissionAttributes) -> None:
        for plugin in self.mutating:
            await plugin.admit(a)

    async def validate(self, a: AdmissionAttributes) -> None:
        for plugin in self.validating:
            await plugin.validate(a)


def forbidden(a: AdmissionAttributes, text: str) -> errors.StatusError:
    """A plugin's rejection: 403 `<resource> "<name>" is forbidden: <text>` (admission.NewForbidden;
    the name from the URL, else the object's name or generateName, else `Unknown`)."""
    name = a.name
    if not name and a.obj is not None:
        md = a.obj.get("metadata") or {}
        name = str(md.get("name") or md.get("generateName") or "")
    name = name or "Unknown"
    return errors.forbidden_message(
        f'{a.rt.group_resource} "{name}" is forbidden: {text}', a.rt, name
    )
