"""Table columns and cells of the volume kinds, as kube-apiserver prints them
(pkg/printers/internalversion/printers.go): core/v1 PersistentVolumes and PersistentVolumeClaims
(access modes as RWO,ROX,RWX,RWOP; VOLUMEMODE with `-o wide`) and the storage.k8s.io/v1 kinds
(a default StorageClass's name ends in "(default)"; a CSIStorageCapacity has no AGE).
Cells never fail on a malformed stored object; ages are formatted by the caller's `age`.
"""

from __future__ import annotations

from typing import Any

from draplane.api.meta import Obj
from draplane.apiserver.printing import AGE, NAME, AgeFn, Column, Printer, aged
from draplane.apiserver.workloadprinters import _at, _name, _obj

DEFAULT_CLASS_ANNOTATIONS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)
BETA_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
_ACCESS_MODES = (
    ("ReadWriteOnce", "RWO"),
    ("ReadOnlyMany", "ROX"),
    ("ReadWriteMany", "RWX"),
    ("ReadWriteOncePod", "RWOP"),
)


def access_modes(modes: Any) -> str:
    """GetAccessModesAsString: the abbreviations in a fixed order, each once."""
    present = set(modes) if isinstance(modes, list) else set()
    return ",".join(short for mode, short in _ACCESS_MODES if mode in present)


def _text(value: Any, unset: str = "") -> str:
    return value if isinstance(value, str) and value else unset


def _phase(obj: Obj) -> str:
    if _at(obj, "metadata", "deletionTimestamp"):
        return "Terminating"
    return _text(_at(obj, "status", "phase"))


def _class(obj: Obj) -> str:
    """GetPersistentVolume(Claim)Class: the beta annotation wins over storageClassName."""
    annotations = _obj(_at(obj, "metadata", "annotations"))
    if BETA_CLASS_ANNOTATION in annotations:
        return str(annotations[BETA_CLASS_ANNOTATION])
    return _text(_at(obj, "spec", "storageClassName"))


def _storage(resources: Any) -> str:
    value = _obj(resources).get("storage")
    return str(value) if value is not None else "0"


def _age(obj: Obj, age: AgeFn) -> str:
    return age(_at(obj, "metadata", "creationTimestamp"))


# core/v1 ----------------------------------------------------------------------------------------

PERSISTENT_VOLUME_COLUMNS: list[Column] = [
    NAME,
    ("Capacity", "string", 0, "capacity is the description of the persistent volume's resources."),
    ("Access Modes", "string", 0, "accessModes contains all ways the volume can be mounted."),
    ("Reclaim Policy", "string", 0, "What happens to a persistent volume when released."),
    ("Status", "string", 0, "phase indicates if a volume is available, bound or released."),
    ("Claim", "string", 0, "claimRef is part of a bi-directional binding with a claim."),
    ("StorageClass", "string", 0, "StorageClass of the pv"),
    ("VolumeAttributesClass", "string", 0, "VolumeAttributesClass of the pv"),
    ("Reason", "string", 0, "reason is a brief CamelCase string that describes any failure."),
    AGE,
    ("VolumeMode", "string", 1, "volumeMode defines if a volume is a filesystem or a block."),
]


def persistent_volume_cells(obj: Obj, age: AgeFn) -> list[Any]:
    spec = _obj(obj.get("spec"))
    ref = spec.get("claimRef")
    claim = f"{_obj(ref).get('namespace') or ''}/{_obj(ref).get('name') or ''}" if ref else ""
    return [
        _name(obj),
        _storage(spec.get("capacity")),
        access_modes(spec.get("accessModes")),
        _text(spec.get("persistentVolumeReclaimPolicy")),
        _phase(obj),
        claim,
        _class(obj),
        _text(spec.get("volumeAttributesClassName"), "<unset>"),
        _text(_at(obj, "status", "reason")),
        _age(obj, age),
        _text(spec.get("volumeMode"), "<unset>"),
    ]


PERSISTENT_VOLUME_CLAIM_COLUMNS: list[Column] = [
    NAME,
    ("Status", "string", 0, "phase represents the current phase of PersistentVolumeClaim."),
    ("Volume", "string", 0, "volumeName is the binding reference to the PersistentVolume."),
    ("Capacity", "string", 0, "capacity represents the actual resources of the volume."),
    ("Access Modes", "string", 0, "accessModes contains the actual access modes of the volume."),
    ("StorageClass", "string", 0, "StorageClass of the pvc"),
    ("VolumeAttributesClass", "string", 0, "VolumeAttributesClass of the pvc"),
    AGE,
    ("VolumeMode", "string", 1, "volumeMode defines what type of volume is required."),
]


def persistent_volume_claim_cells(obj: Obj, age: AgeFn) -> list[Any]:
    spec, status = _obj(obj.get("spec")), _obj(obj.get("status"))
    bound = _text(spec.get("volumeName"))
    return [
        _name(obj),
        _phase(obj),
        bound,
        _storage(status.get("capacity")) if bound else "",
        access_modes(status.get("accessModes")) if bound else "",
        _class(obj),
        _text(spec.get("volumeAttributesClassName"), "<unset>"),
        _age(obj, age),
        _text(spec.get("volumeMode"), "<unset>"),
    ]


# storage.k8s.io/v1 ------------------------------------------------------------------------------

STORAGE_CLASS_COLUMNS: list[Column] = [
    NAME,
    ("Provisioner", "string", 0, "provisioner indicates the type of the provisioner."),
    ("ReclaimPolicy", "string", 0, "reclaimPolicy of dynamically provisioned volumes."),
    ("VolumeBindingMode", "string", 0, "volumeBindingMode: how claims are bound."),
    ("AllowVolumeExpansion", "string", 0, "allowVolumeExpansion: whether claims may expand."),
    AGE,
]


def storage_class_cells(obj: Obj, age: AgeFn) -> list[Any]:
    annotations = _obj(_at(obj, "metadata", "annotations"))
    default = any(annotations.get(key) == "true" for key in DEFAULT_CLASS_ANNOTATIONS)
    return [
        _name(obj) + (" (default)" if default else ""),
        _text(obj.get("provisioner")),
        _text(obj.get("reclaimPolicy"), "Delete"),
        _text(obj.get("volumeBindingMode"), "Immediate"),
        obj.get("allowVolumeExpansion") is True,
        _age(obj, age),
    ]


CSI_DRIVER_COLUMNS: list[Column] = [
    NAME,
    ("AttachRequired", "boolean", 0, "attachRequired: the driver needs an attach operation."),
    ("PodInfoOnMount", "boolean", 0, "podInfoOnMount: pod information is passed on mount."),
    ("StorageCapacity", "boolean", 0, "storageCapacity: scheduling considers capacity."),
    ("TokenRequests", "string", 0, "tokenRequests: the service account tokens passed."),
    ("RequiresRepublish", "boolean", 0, "requiresRepublish: NodePublishVolume is repeated."),
    ("Modes", "string", 0, "volumeLifecycleModes: the kinds of volumes supported."),
    AGE,
]


def csi_driver_cells(obj: Obj, age: AgeFn) -> list[Any]:
    spec = _obj(obj.get("spec"))
    requests = spec.get("tokenRequests")
    tokens = (
        ",".join(str(_obj(t).get("audience") or "") for t in requests)
        if isinstance(requests, list)
        else "<unset>"
    )
    modes = spec.get("volumeLifecycleModes")
    return [
        _name(obj),
        spec.get("attachRequired") is not False,
        spec.get("podInfoOnMount") is True,
        spec.get("storageCapacity") is True,
        tokens,
        spec.get("requiresRepublish") is True,
        ",".join(str(m) for m in modes) if isinstance(modes, list) and modes else "<none>",
        _age(obj, age),
    ]


CSI_NODE_COLUMNS: list[Column] = [
    NAME,
    ("Drivers", "integer", 0, "Drivers indicates the number of CSI drivers registered on the node"),
    AGE,
]


def csi_node_cells(obj: Obj, age: AgeFn) -> list[Any]:
    drivers = _at(obj, "spec", "drivers")
    return [_name(obj), len(drivers) if isinstance(drivers, list) else 0, _age(obj, age)]


CSI_STORAGE_CAPACITY_COLUMNS: list[Column] = [
    NAME,
    ("StorageClassName", "string", 0, "storageClassName the capacity applies to."),
    ("Capacity", "string", 0, "capacity is the value reported by the CSI driver."),
]


def csi_storage_capacity_cells(obj: Obj, age: AgeFn) -> list[Any]:
    capacity = obj.get("capacity")
    return [
        _name(obj),
        _text(obj.get("storageClassName")),
        str(capacity) if capacity is not None else "<unset>",
    ]


VOLUME_ATTACHMENT_COLUMNS: list[Column] = [
    NAME,
    ("Attacher", "string", 0, "attacher indicates the name of the volume driver."),
    ("PV", "string", 0, "persistentVolumeName represents the name of the volume to attach."),
    ("Node", "string", 0, "nodeName represents the node the volume is attached to."),
    ("Attached", "boolean", 0, "attached indicates the volume is successfully attached."),
    AGE,
]


def volume_attachment_cells(obj: Obj, age: AgeFn) -> list[Any]:
    spec = _obj(obj.get("spec"))
    return [
        _name(obj),
        _text(spec.get("attacher")),
        _text(_at(spec, "source", "persistentVolumeName")),
        _text(spec.get("nodeName")),
        _at(obj, "status", "attached") is True,
        _age(obj, age),
    ]


PERSISTENT_VOLUME = Printer(PERSISTENT_VOLUME_COLUMNS, aged(persistent_volume_cells))
PERSISTENT_VOLUME_CLAIM = Printer(
    PERSISTENT_VOLUME_CLAIM_COLUMNS, aged(persistent_volume_claim_cells)
)
STORAGE_CLASS = Printer(STORAGE_CLASS_COLUMNS, aged(storage_class_cells))
CSI_DRIVER = Printer(CSI_DRIVER_COLUMNS, aged(csi_driver_cells))
CSI_NODE = Printer(CSI_NODE_COLUMNS, aged(csi_node_cells))
CSI_STORAGE_CAPACITY = Printer(CSI_STORAGE_CAPACITY_COLUMNS, aged(csi_storage_capacity_cells))
VOLUME_ATTACHMENT = Printer(VOLUME_ATTACHMENT_COLUMNS, aged(volume_attachment_cells))
