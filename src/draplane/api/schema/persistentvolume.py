"""core/v1 PersistentVolume and its volume sources, with the protobuf field numbers of
k8s.io/api/core/v1 generated.proto, and the served PersistentVolumeClaim (its struct is
`volumeclaim`'s, which StatefulSets' volumeClaimTemplates hold too).

A PersistentVolumeSpec's sources are fields of its embedded PersistentVolumeSource (spec field
2), so they carry `embedded=2`. hostPath and nfs are the structs a pod's volumes use
(`volumes`), the in-tree cloud and network sources `intree`'s (shared with a pod's volumes
where upstream shares them).
"""

from __future__ import annotations

from draplane.api.schema import intree
from draplane.api.schema.affinity import NODE_SELECTOR
from draplane.api.schema.core import OBJECT_REFERENCE
from draplane.api.schema.intree import SECRET_REFERENCE as SECRET_REFERENCE
from draplane.api.schema.meta import metadata_field, serve, type_meta
from draplane.api.schema.model import Arr, Map, f, struct
from draplane.api.schema.volumeclaim import PERSISTENT_VOLUME_CLAIM
from draplane.api.schema.volumes import HOST_PATH, NFS_SOURCE

CORE = "io.k8s.api.core.v1."

LOCAL_VOLUME_SOURCE = struct(
    CORE + "LocalVolumeSource",
    "A local disk, partition or directory of a node (needs node affinity).",
    f("path", "string", "Full path of the volume on the node.", required=True, tag=1),
    f("fsType", "string", "Filesystem of a block device.", tag=2, pointer=True),
)
CSI_PERSISTENT_VOLUME_SOURCE = struct(
    CORE + "CSIPersistentVolumeSource",
    "Storage managed by an external CSI volume driver.",
    f("driver", "string", "Name of the CSI driver.", required=True, tag=1),
    f("volumeHandle", "string", "The volume's ID as the driver knows it.", required=True, tag=2),
    f("readOnly", "boolean", "Publish the volume read-only.", tag=3),
    f("fsType", "string", "Filesystem to mount.", tag=4),
    f("volumeAttributes", Map("string"), "Attributes of the volume to publish.", tag=5),
    f("controllerPublishSecretRef", SECRET_REFERENCE, "Secret of ControllerPublish.", tag=6),
    f("nodeStageSecretRef", SECRET_REFERENCE, "Secret of NodeStageVolume.", tag=7),
    f("nodePublishSecretRef", SECRET_REFERENCE, "Secret of NodePublishVolume.", tag=8),
    f("controllerExpandSecretRef", SECRET_REFERENCE, "Secret of ControllerExpandVolume.", tag=9),
    f("nodeExpandSecretRef", SECRET_REFERENCE, "Secret of NodeExpandVolume.", tag=10),
)
VOLUME_NODE_AFFINITY = struct(
    CORE + "VolumeNodeAffinity",
    "The nodes a volume can be accessed from.",
    f("required", NODE_SELECTOR, "Nodes that must match.", tag=1),
)

STORAGE_OS_PERSISTENT = intree.storage_os("StorageOSPersistentVolumeSource", OBJECT_REFERENCE)

PERSISTENT_VOLUME_SOURCES: tuple[tuple[str, str, int], ...] = (
    ("gcePersistentDisk", intree.GCE_PERSISTENT_DISK, 1),
    ("awsElasticBlockStore", intree.AWS_ELASTIC_BLOCK_STORE, 2),
    ("hostPath", HOST_PATH, 3),
    ("glusterfs", intree.GLUSTERFS_PERSISTENT, 4),
    ("nfs", NFS_SOURCE, 5),
    ("rbd", intree.RBD_PERSISTENT, 6),
    ("iscsi", intree.ISCSI_PERSISTENT, 7),
    ("cinder", intree.CINDER_PERSISTENT, 8),
    ("cephfs", intree.CEPHFS_PERSISTENT, 9),
    ("fc", intree.FC, 10),
    ("flocker", intree.FLOCKER, 11),
    ("flexVolume", intree.FLEX_PERSISTENT, 12),
    ("azureFile", intree.AZURE_FILE_PERSISTENT, 13),
    ("vsphereVolume", intree.VSPHERE_VIRTUAL_DISK, 14),
    ("quobyte", intree.QUOBYTE, 15),
    ("azureDisk", intree.AZURE_DISK, 16),
    ("photonPersistentDisk", intree.PHOTON_PERSISTENT_DISK, 17),
    ("portworxVolume", intree.PORTWORX, 18),
    ("scaleIO", intree.SCALE_IO_PERSISTENT, 19),
    ("local", LOCAL_VOLUME_SOURCE, 20),
    ("storageos", STORAGE_OS_PERSISTENT, 21),
    ("csi", CSI_PERSISTENT_VOLUME_SOURCE, 22),
)
"""PersistentVolumeSource's members: JSON name, type, field number (exactly one is set)."""
SOURCE_NAMES = tuple(name for name, _, _ in PERSISTENT_VOLUME_SOURCES)

PERSISTENT_VOLUME_SPEC = struct(
    CORE + "PersistentVolumeSpec",
    "The specification of a persistent volume.",
    f("capacity", Map("quantity"), "The volume's capacity (storage).", tag=1),
    *(
        f(name, type_, f"The {name} volume source.", tag=tag, embedded=2)
        for name, type_, tag in PERSISTENT_VOLUME_SOURCES
    ),
    f(
        "accessModes",
        Arr("string"),
        "ReadWriteOnce, ReadOnlyMany, ReadWriteMany or ReadWriteOncePod.",
        list_type="atomic",
        tag=3,
    ),
    f("claimRef", OBJECT_REFERENCE, "The claim bound to the volume.", tag=4),
    f(
        "persistentVolumeReclaimPolicy",
        "string",
        "What happens to the volume when its claim is released: Retain, Delete or Recycle.",
        enum=("Delete", "Recycle", "Retain"),
        tag=5,
    ),
    f("storageClassName", "string", "The StorageClass of the volume.", tag=6),
    f("mountOptions", Arr("string"), "Mount options.", list_type="atomic", tag=7),
    f(
        "volumeMode",
        "string",
        "Filesystem or Block.",
        enum=("Block", "Filesystem"),
        tag=8,
        pointer=True,
    ),
    f("nodeAffinity", VOLUME_NODE_AFFINITY, "The nodes the volume can be used on.", tag=9),
    f(
        "volumeAttributesClassName",
        "string",
        "The VolumeAttributesClass of the volume.",
        tag=10,
        pointer=True,
    ),
)
PERSISTENT_VOLUME_STATUS = struct(
    CORE + "PersistentVolumeStatus",
    "The observed state of a persistent volume.",
    f(
        "phase",
        "string",
        "Pending, Available, Bound, Released or Failed.",
        enum=("Available", "Bound", "Failed", "Pending", "Released"),
        tag=1,
    ),
    f("message", "string", "Why the volume is in this state.", tag=2),
    f("reason", "string", "A brief CamelCase reason of a failure.", tag=3),
    f("lastPhaseTransitionTime", "time", "When the phase last changed.", tag=4),
)
PERSISTENT_VOLUME = struct(
    CORE + "PersistentVolume",
    "A piece of storage provisioned by an administrator or a StorageClass.",
    *type_meta(),
    metadata_field(),
    f("spec", PERSISTENT_VOLUME_SPEC, "The volume.", emit=True, tag=2),
    f("status", PERSISTENT_VOLUME_STATUS, "Observed state.", emit=True, tag=3),
)

serve("", "v1", "PersistentVolume", PERSISTENT_VOLUME)
serve("", "v1", "PersistentVolumeClaim", PERSISTENT_VOLUME_CLAIM)
