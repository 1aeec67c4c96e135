"""ServiceAccount admission for pods (plugin/pkg/admission/serviceaccount): a pod without
`spec.serviceAccountName` runs as `default`, and a named service account must exist
("error looking up service account NS/NAME"). Mirror pods are left alone. `default` may be
missing for a moment after its namespace is created (the service account controller creates
it), so it is not required to exist; no token volume is added (simulated nodes mount nothing).
"""

from __future__ import annotations

from draplane.api import kinds
from draplane.apiserver.admission import AdmissionAttributes, forbidden
from draplane.apiserver.admission.noderestriction import MIRROR_ANNOTATION
from draplane.storage.interface import Storage

DEFAULT = "default"


class ServiceAccountAdmission:
    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    def _applies(self, a: AdmissionAttributes) -> bool:
        if a.rt is not kinds.PODS or a.operation != "CREATE" or a.subresource or a.obj is None:
            return False
        md = a.obj.get("metadata") or {}
        return MIRROR_ANNOTATION not in (md.get("annotations") or {})

    async def admit(self, a: AdmissionAttributes) -> None:
        if not self._applies(a) or a.obj is None:
            return
        spec = a.obj.get("spec")
        if isinstance(spec, dict) and not spec.get("serviceAccountName"):
            spec["serviceAccountName"] = spec.get("serviceAccount") or DEFAULT
            spec["serviceAccount"] = spec["serviceAccountName"]

    async def validate(self, a: AdmissionAttributes) -> None:
        if not self._applies(a) or a.obj is None:
            return
        spec = a.obj.get("spec")
        name = spec.get("serviceAccountName") if isinstance(spec, dict) else None
        if not isinstance(name, str) or name == DEFAULT:
            return
        if await self._storage.get(kinds.SERVICE_ACCOUNTS.key, a.namespace, name) is None:
            raise forbidden(
                a,
                f"error looking up service account {a.namespace}/{name}: serviceaccount "
                f'"{name}" not found',
            )
