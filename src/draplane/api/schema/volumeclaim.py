"""core/v1 PersistentVolumeClaim, as a StatefulSet's volumeClaimTemplates hold it (Kubernetes
1.28; `persistentvolume` serves the kind)."""

from __future__ import annotations

from draplane.api.schema.container import RESOURCE_REQUIREMENTS
from draplane.api.schema.meta import LABEL_SELECTOR, metadata_field, type_meta
from draplane.api.schema.model import Arr, Map, f, struct

CORE = "io.k8s.api.core.v1."

TYPED_LOCAL_OBJECT_REFERENCE = struct(
    CORE + "TypedLocalObjectReference",
    "A reference to an object of any kind in the same namespace.",
    f(
        "apiGroup",
        "string",
        "API group of the referent; empty for the core group.",
        tag=1,
        pointer=True,
    ),
    f("kind", "string", "Kind of the referent.", required=True, tag=2),
    f("name", "string", "Name of the referent.", required=True, tag=3),
)
TYPED_OBJECT_REFERENCE = struct(
    CORE + "TypedObjectReference",
    "A reference to an object of any kind, possibly in another namespace.",
    f(
        "apiGroup",
        "string",
        "API group of the referent; empty for the core group.",
        tag=1,
        pointer=True,
    ),
    f("kind", "string", "Kind of the referent.", required=True, tag=2),
    f("name", "string", "Name of the referent.", required=True, tag=3),
    f("namespace", "string", "Namespace of the referent.", tag=4, pointer=True),
)
PERSISTENT_VOLUME_CLAIM_SPEC = struct(
    CORE + "PersistentVolumeClaimSpec",
    "The storage a claim asks for.",
    f("accessModes", Arr("string"), "ReadWriteOnce, ReadOnlyMany, ReadWriteMany, ...", tag=1),
    f("selector", LABEL_SELECTOR, "Label query over the volumes that may bind.", tag=4),
    f("resources", RESOURCE_REQUIREMENTS, "The least and most storage the claim needs.", tag=2),
    f("volumeName", "string", "The PersistentVolume bound to the claim.", tag=3),
    f("storageClassName", "string", "The StorageClass of the claim.", tag=5, pointer=True),
    f("volumeMode", "string", "Filesystem or Block.", tag=6, pointer=True),
    f("dataSource", TYPED_LOCAL_OBJECT_REFERENCE, "An object to populate the volume from.", tag=7),
    f("dataSourceRef", TYPED_OBJECT_REFERENCE, "The object the volume is populated from.", tag=8),
)
PERSISTENT_VOLUME_CLAIM_CONDITION = struct(
    CORE + "PersistentVolumeClaimCondition",
    "A condition of a claim (Resizing, FileSystemResizePending).",
    f("type", "string", "Type of the condition.", required=True, tag=1),
    f("status", "string", "True, False or Unknown.", required=True, tag=2),
    f("lastProbeTime", "time", "When the condition was last probed.", tag=3),
    f("lastTransitionTime", "time", "When the condition last changed status.", tag=4),
    f("reason", "string", "A brief CamelCase reason of the last transition.", tag=5),
    f("message", "string", "Details of the last transition.", tag=6),
)
PERSISTENT_VOLUME_CLAIM_STATUS = struct(
    CORE + "PersistentVolumeClaimStatus",
    "The observed state of a claim.",
    f("phase", "string", "Pending, Bound or Lost.", tag=1),
    f("accessModes", Arr("string"), "Access modes of the bound volume.", tag=2, list_type="atomic"),
    f("capacity", Map("quantity"), "Capacity of the bound volume.", tag=3),
    f(
        "conditions",
        Arr(PERSISTENT_VOLUME_CLAIM_CONDITION),
        "Conditions of the claim.",
        merge="type",
        list_type="map",
        tag=4,
    ),
    f("allocatedResources", Map("quantity"), "Storage allocated to the claim.", tag=5),
    f(
        "allocatedResourceStatuses",
        Map("string"),
        "State of the resize of each resource.",
        map_type="granular",
        tag=7,
    ),
)
PERSISTENT_VOLUME_CLAIM = struct(
    CORE + "PersistentVolumeClaim",
    "A user's request for storage.",
    *type_meta(),
    metadata_field(),
    f("spec", PERSISTENT_VOLUME_CLAIM_SPEC, "What the claim asks for.", emit=True, tag=2),
    f("status", PERSISTENT_VOLUME_CLAIM_STATUS, "Observed state.", emit=True, tag=3),
)
