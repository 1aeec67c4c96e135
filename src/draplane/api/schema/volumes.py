"""core/v1 Volume and its sources: the commonly used ones typed (hostPath, emptyDir, secret,
configMap, downwardAPI, projected, persistentVolumeClaim, nfs, csi, ephemeral) and the in-tree
cloud and network ones (`intree`); KeyToPath (Kubernetes 1.28).

In protobuf a Volume's sources are fields of its VolumeSource (Volume field 2): every source
field has `embedded=2`."""

from __future__ import annotations

from draplane.api.schema import intree
from draplane.api.schema.container import OBJECT_FIELD_SELECTOR, RESOURCE_FIELD_SELECTOR
from draplane.api.schema.intree import LOCAL_OBJECT_REFERENCE as LOCAL_OBJECT_REFERENCE
from draplane.api.schema.meta import metadata_field
from draplane.api.schema.model import Arr, Field, Map, Type, f, struct
from draplane.api.schema.volumeclaim import PERSISTENT_VOLUME_CLAIM_SPEC

CORE = "io.k8s.api.core.v1."

KEY_TO_PATH = struct(
    CORE + "KeyToPath",
    "Maps a key of a ConfigMap or Secret to a file in the volume.",
    f("key", "string", "The key to project.", required=True, tag=1),
    f("path", "string", "Relative path of the file.", required=True, tag=2),
    f("mode", "int32", "Mode bits of the file.", tag=3, pointer=True),
)


def _named(what: str) -> Field:
    """The `name` of the LocalObjectReference a ConfigMap or Secret source inlines (its
    protobuf field 1)."""
    return f("name", "string", f"Name of the {what}.", tag=1, embedded=1)


def _items(what: str) -> Field:
    return f("items", Arr(KEY_TO_PATH), f"Keys of the {what} to project, and their files.", tag=2)


def _optional(what: str, tag: int) -> Field:
    return f("optional", "boolean", f"Whether the {what} may be missing.", tag=tag, pointer=True)


def _default_mode(tag: int) -> Field:
    return f("defaultMode", "int32", "Mode bits of the created files.", tag=tag, pointer=True)


EMPTY_DIR = struct(
    CORE + "EmptyDirVolumeSource",
    "A temporary directory that lives as long as the pod.",
    f("medium", "string", "Storage medium; empty for the node's default, or Memory.", tag=1),
    f("sizeLimit", "quantity", "Most storage the volume may use.", tag=2),
)
HOST_PATH = struct(
    CORE + "HostPathVolumeSource",
    "A file or directory on the node.",
    f("path", "string", "Path on the node.", required=True, tag=1),
    f("type", "string", "What must exist at the path.", tag=2, pointer=True),
)
PVC_SOURCE = struct(
    CORE + "PersistentVolumeClaimVolumeSource",
    "A PersistentVolumeClaim in the pod's namespace.",
    f("claimName", "string", "Name of the claim.", required=True, tag=1),
    f("readOnly", "boolean", "Mount read-only.", tag=2),
)
SECRET_SOURCE = struct(
    CORE + "SecretVolumeSource",
    "The keys of a Secret as files.",
    f("secretName", "string", "Name of the Secret in the pod's namespace.", tag=1),
    _items("Secret"),
    _default_mode(3),
    _optional("Secret or its keys", 4),
)
CONFIG_MAP_SOURCE = struct(
    CORE + "ConfigMapVolumeSource",
    "The keys of a ConfigMap as files.",
    _named("ConfigMap"),
    _items("ConfigMap"),
    _default_mode(3),
    _optional("ConfigMap or its keys", 4),
)
DOWNWARD_API_FILE = struct(
    CORE + "DownwardAPIVolumeFile",
    "A file holding a field of the pod or a resource of a container.",
    f("path", "string", "Relative path of the file.", required=True, tag=1),
    f("fieldRef", OBJECT_FIELD_SELECTOR, "A field of the pod.", tag=2),
    f("resourceFieldRef", RESOURCE_FIELD_SELECTOR, "A resource of a container.", tag=3),
    f("mode", "int32", "Mode bits of the file.", tag=4, pointer=True),
)
DOWNWARD_API_SOURCE = struct(
    CORE + "DownwardAPIVolumeSource",
    "Fields of the pod and resources of its containers as files.",
    f("items", Arr(DOWNWARD_API_FILE), "The files.", tag=1),
    _default_mode(2),
)
SECRET_PROJECTION = struct(
    CORE + "SecretProjection",
    "The keys of a Secret projected into a volume.",
    _named("Secret"),
    _items("Secret"),
    _optional("Secret or its keys", 4),
)
CONFIG_MAP_PROJECTION = struct(
    CORE + "ConfigMapProjection",
    "The keys of a ConfigMap projected into a volume.",
    _named("ConfigMap"),
    _items("ConfigMap"),
    _optional("ConfigMap or its keys", 4),
)
DOWNWARD_API_PROJECTION = struct(
    CORE + "DownwardAPIProjection",
    "Fields of the pod projected into a volume.",
    f("items", Arr(DOWNWARD_API_FILE), "The files.", tag=1),
)
SERVICE_ACCOUNT_TOKEN_PROJECTION = struct(
    CORE + "ServiceAccountTokenProjection",
    "A token of the pod's service account projected into a volume.",
    f("audience", "string", "Intended audience of the token; the API server's by default.", tag=1),
    f("expirationSeconds", "int64", "Requested validity of the token.", tag=2, pointer=True),
    f("path", "string", "Relative path of the token file.", required=True, tag=3),
)
VOLUME_PROJECTION = struct(
    CORE + "VolumeProjection",
    "One source of a projected volume; exactly one field is set.",
    f("secret", SECRET_PROJECTION, "Keys of a Secret.", tag=1),
    f("downwardAPI", DOWNWARD_API_PROJECTION, "Fields of the pod.", tag=2),
    f("configMap", CONFIG_MAP_PROJECTION, "Keys of a ConfigMap.", tag=3),
    f("serviceAccountToken", SERVICE_ACCOUNT_TOKEN_PROJECTION, "A token.", tag=4),
)
PROJECTED_SOURCE = struct(
    CORE + "ProjectedVolumeSource",
    "Secrets, ConfigMaps, downward API fields and tokens in one directory.",
    f("sources", Arr(VOLUME_PROJECTION), "The projections.", tag=1),
    _default_mode(2),
)
NFS_SOURCE = struct(
    CORE + "NFSVolumeSource",
    "An NFS export.",
    f("server", "string", "Host name or IP of the NFS server.", required=True, tag=1),
    f("path", "string", "The exported path.", required=True, tag=2),
    f("readOnly", "boolean", "Mount read-only.", tag=3),
)
CSI_SOURCE = struct(
    CORE + "CSIVolumeSource",
    "An ephemeral volume a CSI driver provides.",
    f("driver", "string", "Name of the CSI driver.", required=True, tag=1),
    f("readOnly", "boolean", "Mount read-only.", tag=2, pointer=True),
    f("fsType", "string", "Filesystem type to mount.", tag=3, pointer=True),
    f("volumeAttributes", Map("string"), "Driver-specific properties.", tag=4),
    f(
        "nodePublishSecretRef",
        LOCAL_OBJECT_REFERENCE,
        "Secret passed to the driver's NodePublishVolume.",
        tag=5,
    ),
)
PERSISTENT_VOLUME_CLAIM_TEMPLATE = struct(
    CORE + "PersistentVolumeClaimTemplate",
    "The PersistentVolumeClaim created for an ephemeral volume.",
    metadata_field(),
    f("spec", PERSISTENT_VOLUME_CLAIM_SPEC, "The claim's spec.", required=True, tag=2),
)
EPHEMERAL_SOURCE = struct(
    CORE + "EphemeralVolumeSource",
    "A volume provisioned through a PersistentVolumeClaim that lives as long as the pod.",
    f(
        "volumeClaimTemplate",
        PERSISTENT_VOLUME_CLAIM_TEMPLATE,
        "The claim to create for the pod.",
        tag=1,
    ),
)

VOLUME_SOURCES: tuple[tuple[str, Type, int], ...] = (
    ("hostPath", HOST_PATH, 1),
    ("emptyDir", EMPTY_DIR, 2),
    ("gcePersistentDisk", intree.GCE_PERSISTENT_DISK, 3),
    ("awsElasticBlockStore", intree.AWS_ELASTIC_BLOCK_STORE, 4),
    ("gitRepo", intree.GIT_REPO, 5),
    ("secret", SECRET_SOURCE, 6),
    ("nfs", NFS_SOURCE, 7),
    ("iscsi", intree.ISCSI, 8),
    ("glusterfs", intree.GLUSTERFS, 9),
    ("persistentVolumeClaim", PVC_SOURCE, 10),
    ("rbd", intree.RBD, 11),
    ("flexVolume", intree.FLEX, 12),
    ("cinder", intree.CINDER, 13),
    ("cephfs", intree.CEPHFS, 14),
    ("flocker", intree.FLOCKER, 15),
    ("downwardAPI", DOWNWARD_API_SOURCE, 16),
    ("fc", intree.FC, 17),
    ("azureFile", intree.AZURE_FILE, 18),
    ("configMap", CONFIG_MAP_SOURCE, 19),
    ("vsphereVolume", intree.VSPHERE_VIRTUAL_DISK, 20),
    ("quobyte", intree.QUOBYTE, 21),
    ("azureDisk", intree.AZURE_DISK, 22),
    ("photonPersistentDisk", intree.PHOTON_PERSISTENT_DISK, 23),
    ("projected", PROJECTED_SOURCE, 26),
    ("portworxVolume", intree.PORTWORX, 24),
    ("scaleIO", intree.SCALE_IO, 25),
    ("storageos", intree.STORAGE_OS, 27),
    ("csi", CSI_SOURCE, 28),
    ("ephemeral", EPHEMERAL_SOURCE, 29),
)
"""The VolumeSource fields in Go order: name, type and protobuf field number."""

VOLUME = struct(
    CORE + "Volume",
    "A named volume the pod's containers may mount; exactly one source is set.",
    f("name", "string", "Name of the volume, unique in the pod.", required=True, tag=1),
    *(
        f(name, type_, f"The {name} volume source.", tag=tag, embedded=2)
        for name, type_, tag in VOLUME_SOURCES
    ),
)
