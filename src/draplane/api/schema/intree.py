"""core/v1's in-tree cloud and network volume sources (gcePersistentDisk, awsElasticBlockStore,
gitRepo, glusterfs, rbd, iscsi, cinder, cephfs, fc, flocker, flexVolume, azureFile,
vsphereVolume, quobyte, azureDisk, photonPersistentDisk, portworxVolume, scaleIO, storageos),
typed as their Go structs with the field numbers of k8s.io/api/core/v1 generated.proto.

A pod's VolumeSource and a PersistentVolumeSource share a struct where upstream does; the
PersistentVolume-only variants (`...PersistentVolumeSource`) differ in naming a Secret by
namespace too (SecretReference; StorageOS's an ObjectReference: `persistentvolume` registers
that one with `storage_os`) or in an extra namespace field. LocalObjectReference and
SecretReference live here, below `volumes` and `persistentvolume`.
"""

from __future__ import annotations

from draplane.api.schema.model import Arr, Field, Map, f, struct

CORE = "io.k8s.api.core.v1."

LOCAL_OBJECT_REFERENCE = struct(
    CORE + "LocalObjectReference",
    "Names an object in the same namespace.",
    f("name", "string", "Name of the referent.", tag=1),
)
SECRET_REFERENCE = struct(
    CORE + "SecretReference",
    "A Secret by name and namespace.",
    f("name", "string", "Name of the Secret.", tag=1),
    f("namespace", "string", "Namespace of the Secret.", tag=2),
)


def _fs_type(tag: int, pointer: bool = False) -> Field:
    return f("fsType", "string", "Filesystem type to mount.", tag=tag, pointer=pointer)


def _read_only(tag: int, pointer: bool = False) -> Field:
    return f("readOnly", "boolean", "Mount read-only.", tag=tag, pointer=pointer)


def _secret_ref(type_: str, tag: int, required: bool = False) -> Field:
    # a Go pointer without omitempty when required (ScaleIO): null, not {}, when unset
    return f(
        "secretRef", type_, "Secret with the credentials.", tag=tag, required=required, emit=False
    )


def _monitors() -> Field:
    return f("monitors", Arr("string"), "Ceph monitors.", required=True, tag=1, list_type="atomic")


GCE_PERSISTENT_DISK = struct(
    CORE + "GCEPersistentDiskVolumeSource",
    "A Persistent Disk of Google Compute Engine.",
    f("pdName", "string", "Name of the disk in GCE.", required=True, tag=1),
    _fs_type(2),
    f("partition", "int32", "Partition of the disk to mount.", tag=3),
    _read_only(4),
)
AWS_ELASTIC_BLOCK_STORE = struct(
    CORE + "AWSElasticBlockStoreVolumeSource",
    "An Elastic Block Store volume of AWS.",
    f("volumeID", "string", "ID of the EBS volume.", required=True, tag=1),
    _fs_type(2),
    f("partition", "int32", "Partition of the volume to mount.", tag=3),
    _read_only(4),
)
GIT_REPO = struct(
    CORE + "GitRepoVolumeSource",
    "A directory holding a clone of a git repository (deprecated).",
    f("repository", "string", "URL of the repository.", required=True, tag=1),
    f("revision", "string", "Commit hash to check out.", tag=2),
    f("directory", "string", "Directory to clone into.", tag=3),
)
GLUSTERFS = struct(
    CORE + "GlusterfsVolumeSource",
    "A Glusterfs mount.",
    f("endpoints", "string", "Endpoints naming the Glusterfs cluster.", required=True, tag=1),
    f("path", "string", "Glusterfs volume path.", required=True, tag=2),
    _read_only(3),
)
GLUSTERFS_PERSISTENT = struct(
    CORE + "GlusterfsPersistentVolumeSource",
    "A Glusterfs mount of a persistent volume.",
    f("endpoints", "string", "Endpoints naming the Glusterfs cluster.", required=True, tag=1),
    f("path", "string", "Glusterfs volume path.", required=True, tag=2),
    _read_only(3),
    f("endpointsNamespace", "string", "Namespace of the Endpoints.", tag=4, pointer=True),
)


def _rbd(name: str, secret: str) -> str:
    return struct(
        CORE + name,
        "A Rados Block Device mount.",
        _monitors(),
        f("image", "string", "The rados image name.", required=True, tag=2),
        _fs_type(3),
        f("pool", "string", "The rados pool name.", tag=4),
        f("user", "string", "The rados user name.", tag=5),
        f("keyring", "string", "Path of the key ring of the user.", tag=6),
        _secret_ref(secret, 7),
        _read_only(8),
    )


def _iscsi(name: str, secret: str) -> str:
    return struct(
        CORE + name,
        "An ISCSI disk.",
        f("targetPortal", "string", "iSCSI target portal.", required=True, tag=1),
        f("iqn", "string", "iSCSI qualified name of the target.", required=True, tag=2),
        f("lun", "int32", "iSCSI target lun number.", required=True, tag=3),
        f("iscsiInterface", "string", "Interface name of the iSCSI transport.", tag=4),
        _fs_type(5),
        _read_only(6),
        f("portals", Arr("string"), "Further target portals.", tag=7, list_type="atomic"),
        f("chapAuthDiscovery", "boolean", "Use iSCSI discovery CHAP authentication.", tag=8),
        f("chapAuthSession", "boolean", "Use iSCSI session CHAP authentication.", tag=11),
        _secret_ref(secret, 10),
        f("initiatorName", "string", "Custom iSCSI initiator name.", tag=12, pointer=True),
    )


def _cinder(name: str, secret: str) -> str:
    return struct(
        CORE + name,
        "A cinder volume of OpenStack.",
        f("volumeID", "string", "ID of the cinder volume.", required=True, tag=1),
        _fs_type(2),
        _read_only(3),
        _secret_ref(secret, 4),
    )


def _cephfs(name: str, secret: str) -> str:
    return struct(
        CORE + name,
        "A Ceph filesystem mount.",
        _monitors(),
        f("path", "string", "Root of the mount.", tag=2),
        f("user", "string", "The rados user name.", tag=3),
        f("secretFile", "string", "Path of the key ring of the user.", tag=4),
        _secret_ref(secret, 5),
        _read_only(6),
    )


def _flex(name: str, secret: str) -> str:
    return struct(
        CORE + name,
        "A volume provisioned by an exec-based plugin.",
        f("driver", "string", "Name of the driver.", required=True, tag=1),
        _fs_type(2),
        _secret_ref(secret, 3),
        _read_only(4),
        f("options", Map("string"), "Extra command options.", tag=5),
    )


def _scale_io(name: str, secret: str) -> str:
    return struct(
        CORE + name,
        "A ScaleIO persistent volume.",
        f("gateway", "string", "Host address of the ScaleIO API gateway.", required=True, tag=1),
        f("system", "string", "Name of the storage system.", required=True, tag=2),
        _secret_ref(secret, 3, required=True),
        f("sslEnabled", "boolean", "Enable SSL to the gateway.", tag=4),
        f("protectionDomain", "string", "Name of the protection domain.", tag=5),
        f("storagePool", "string", "Name of the storage pool.", tag=6),
        f("storageMode", "string", "ThickProvisioned or ThinProvisioned.", tag=7),
        f("volumeName", "string", "Name of the volume in the system.", tag=8),
        _fs_type(9),
        _read_only(10),
    )


def storage_os(name: str, secret: str) -> str:
    return struct(
        CORE + name,
        "A StorageOS volume.",
        f("volumeName", "string", "Name of the volume in its namespace.", tag=1),
        f("volumeNamespace", "string", "StorageOS namespace of the volume.", tag=2),
        _fs_type(3),
        _read_only(4),
        _secret_ref(secret, 5),
    )


def _azure_file(name: str, persistent: bool) -> str:
    namespace = (
        (f("secretNamespace", "string", "Namespace of the Secret.", tag=4, pointer=True),)
        if persistent
        else ()
    )
    return struct(
        CORE + name,
        "An Azure File Service mount.",
        f("secretName", "string", "Secret with the account name and key.", required=True, tag=1),
        f("shareName", "string", "The share name.", required=True, tag=2),
        _read_only(3),
        *namespace,
    )


RBD = _rbd("RBDVolumeSource", LOCAL_OBJECT_REFERENCE)
RBD_PERSISTENT = _rbd("RBDPersistentVolumeSource", SECRET_REFERENCE)
ISCSI = _iscsi("ISCSIVolumeSource", LOCAL_OBJECT_REFERENCE)
ISCSI_PERSISTENT = _iscsi("ISCSIPersistentVolumeSource", SECRET_REFERENCE)
CINDER = _cinder("CinderVolumeSource", LOCAL_OBJECT_REFERENCE)
CINDER_PERSISTENT = _cinder("CinderPersistentVolumeSource", SECRET_REFERENCE)
CEPHFS = _cephfs("CephFSVolumeSource", LOCAL_OBJECT_REFERENCE)
CEPHFS_PERSISTENT = _cephfs("CephFSPersistentVolumeSource", SECRET_REFERENCE)
FLEX = _flex("FlexVolumeSource", LOCAL_OBJECT_REFERENCE)
FLEX_PERSISTENT = _flex("FlexPersistentVolumeSource", SECRET_REFERENCE)
SCALE_IO = _scale_io("ScaleIOVolumeSource", LOCAL_OBJECT_REFERENCE)
SCALE_IO_PERSISTENT = _scale_io("ScaleIOPersistentVolumeSource", SECRET_REFERENCE)
STORAGE_OS = storage_os("StorageOSVolumeSource", LOCAL_OBJECT_REFERENCE)
AZURE_FILE = _azure_file("AzureFileVolumeSource", persistent=False)
AZURE_FILE_PERSISTENT = _azure_file("AzureFilePersistentVolumeSource", persistent=True)

FLOCKER = struct(
    CORE + "FlockerVolumeSource",
    "A Flocker volume; one of datasetName and datasetUUID is set.",
    f("datasetName", "string", "Name of the dataset.", tag=1),
    f("datasetUUID", "string", "UUID of the dataset.", tag=2),
)
FC = struct(
    CORE + "FCVolumeSource",
    "A Fibre Channel volume.",
    f("targetWWNs", Arr("string"), "Target world wide names.", tag=1, list_type="atomic"),
    f("lun", "int32", "Target lun number.", tag=2, pointer=True),
    _fs_type(3),
    _read_only(4),
    f("wwids", Arr("string"), "World wide identifiers of the volume.", tag=5, list_type="atomic"),
)
VSPHERE_VIRTUAL_DISK = struct(
    CORE + "VsphereVirtualDiskVolumeSource",
    "A vSphere volume.",
    f("volumePath", "string", "Path identifying the vSphere volume vmdk.", required=True, tag=1),
    _fs_type(2),
    f("storagePolicyName", "string", "Storage policy based management profile.", tag=3),
    f("storagePolicyID", "string", "ID of the storage policy profile.", tag=4),
)
QUOBYTE = struct(
    CORE + "QuobyteVolumeSource",
    "A Quobyte mount.",
    f(
        "registry",
        "string",
        "Quobyte registries (host:port, comma-separated).",
        required=True,
        tag=1,
    ),
    f("volume", "string", "The Quobyte volume by name.", required=True, tag=2),
    _read_only(3),
    f("user", "string", "User to map volume access to.", tag=4),
    f("group", "string", "Group to map volume access to.", tag=5),
    f("tenant", "string", "Tenant owning the volume.", tag=6),
)
AZURE_DISK = struct(
    CORE + "AzureDiskVolumeSource",
    "An Azure data disk.",
    f("diskName", "string", "Name of the data disk in blob storage.", required=True, tag=1),
    f("diskURI", "string", "URI of the data disk in blob storage.", required=True, tag=2),
    f("cachingMode", "string", "None, ReadOnly or ReadWrite.", tag=3, pointer=True),
    _fs_type(4, pointer=True),
    _read_only(5, pointer=True),
    f("kind", "string", "Shared, Dedicated or Managed.", tag=6, pointer=True),
)
PHOTON_PERSISTENT_DISK = struct(
    CORE + "PhotonPersistentDiskVolumeSource",
    "A Photon Controller persistent disk.",
    f("pdID", "string", "ID of the disk.", required=True, tag=1),
    _fs_type(2),
)
PORTWORX = struct(
    CORE + "PortworxVolumeSource",
    "A Portworx volume.",
    f("volumeID", "string", "ID of the volume.", required=True, tag=1),
    _fs_type(2),
    _read_only(3),
)
