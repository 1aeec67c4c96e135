"""storage.k8s.io/v1 StorageClass, CSIDriver, CSINode, CSIStorageCapacity and VolumeAttachment
(k8s.io/api/storage/v1), with the protobuf field numbers of its generated.proto; and core/v1
TopologySelectorTerm, which a StorageClass's allowedTopologies hold."""

from __future__ import annotations

from draplane.api.schema.meta import LABEL_SELECTOR, metadata_field, serve, type_meta
from draplane.api.schema.model import Arr, Map, f, struct

CORE = "io.k8s.api.core.v1."
STORAGE = "io.k8s.api.storage.v1."

TOPOLOGY_SELECTOR_LABEL_REQUIREMENT = struct(
    CORE + "TopologySelectorLabelRequirement",
    "A topology label key and the values it may have.",
    f("key", "string", "The label key.", required=True, tag=1),
    f(
        "values",
        Arr("string"),
        "Values the key may have; one must match.",
        required=True,
        list_type="atomic",
        tag=2,
    ),
)
TOPOLOGY_SELECTOR_TERM = struct(
    CORE + "TopologySelectorTerm",
    "Label requirements that must all hold for a topology to match.",
    f(
        "matchLabelExpressions",
        Arr(TOPOLOGY_SELECTOR_LABEL_REQUIREMENT),
        "The label requirements, ANDed.",
        list_type="atomic",
        tag=1,
    ),
)

STORAGE_CLASS = struct(
    STORAGE + "StorageClass",
    "A class of storage PersistentVolumes may be dynamically provisioned from.",
    *type_meta(),
    metadata_field(),
    f("provisioner", "string", "The type of the provisioner.", required=True, tag=2),
    f("parameters", Map("string"), "Parameters of the provisioner.", tag=3),
    f(
        "reclaimPolicy",
        "string",
        "The reclaim policy of provisioned volumes: Delete (the default) or Retain.",
        enum=("Delete", "Recycle", "Retain"),
        tag=4,
        pointer=True,
    ),
    f(
        "mountOptions",
        Arr("string"),
        "Mount options of provisioned volumes.",
        list_type="atomic",
        tag=5,
    ),
    f("allowVolumeExpansion", "boolean", "Claims may be expanded.", tag=6, pointer=True),
    f(
        "volumeBindingMode",
        "string",
        "Immediate (the default) or WaitForFirstConsumer: when claims are bound.",
        enum=("Immediate", "WaitForFirstConsumer"),
        tag=7,
        pointer=True,
    ),
    f(
        "allowedTopologies",
        Arr(TOPOLOGY_SELECTOR_TERM),
        "The topologies volumes may be provisioned in; empty: any.",
        list_type="atomic",
        tag=8,
    ),
)

TOKEN_REQUEST = struct(
    STORAGE + "TokenRequest",
    "A service account token the CSI driver needs.",
    f("audience", "string", "The intended audience of the token.", required=True, tag=1),
    f("expirationSeconds", "int64", "How long the token is valid.", tag=2, pointer=True),
)
CSI_DRIVER_SPEC = struct(
    STORAGE + "CSIDriverSpec",
    "What a CSI driver needs from Kubernetes.",
    f("attachRequired", "boolean", "The driver needs an attach operation.", tag=1, pointer=True),
    f(
        "podInfoOnMount",
        "boolean",
        "The driver gets pod information on mount.",
        tag=2,
        pointer=True,
    ),
    f(
        "volumeLifecycleModes",
        Arr("string"),
        "Persistent and/or Ephemeral: the kinds of volumes the driver supports.",
        list_type="set",
        tag=3,
    ),
    f(
        "storageCapacity",
        "boolean",
        "Scheduling considers the CSIStorageCapacity objects the driver publishes.",
        tag=4,
        pointer=True,
    ),
    f(
        "fsGroupPolicy",
        "string",
        "Whether the volume's ownership and permissions may be changed to the pod's fsGroup.",
        enum=("File", "None", "ReadWriteOnceWithFSType"),
        tag=5,
        pointer=True,
    ),
    f(
        "tokenRequests",
        Arr(TOKEN_REQUEST),
        "Service account tokens passed to the driver.",
        list_type="atomic",
        tag=6,
    ),
    f(
        "requiresRepublish",
        "boolean",
        "NodePublishVolume is called periodically.",
        tag=7,
        pointer=True,
    ),
    f(
        "seLinuxMount",
        "boolean",
        "The driver supports the -o context mount option.",
        tag=8,
        pointer=True,
    ),
    f(
        "nodeAllocatableUpdatePeriodSeconds",
        "int64",
        "Seconds between updates of the CSINode allocatable count.",
        tag=9,
        pointer=True,
    ),
    f(
        "serviceAccountTokenInSecrets",
        "boolean",
        "Tokens are passed in NodePublishVolume's secrets, not its volume context.",
        tag=10,
        pointer=True,
    ),
)
CSI_DRIVER = struct(
    STORAGE + "CSIDriver",
    "A Container Storage Interface volume driver deployed on the cluster.",
    *type_meta(),
    metadata_field(),
    f("spec", CSI_DRIVER_SPEC, "The specification of the driver.", required=True, tag=2),
)

VOLUME_NODE_RESOURCES = struct(
    STORAGE + "VolumeNodeResources",
    "Limits on the volumes of a node.",
    f("count", "int32", "Most unique volumes of the driver on the node.", tag=1, pointer=True),
)
CSI_NODE_DRIVER = struct(
    STORAGE + "CSINodeDriver",
    "One CSI driver installed on a node.",
    f("name", "string", "The CSI driver's name.", required=True, tag=1),
    f("nodeID", "string", "The node's ID as the driver knows it.", required=True, tag=2),
    f(
        "topologyKeys",
        Arr("string"),
        "The topology keys the driver supports.",
        list_type="atomic",
        tag=3,
    ),
    f("allocatable", VOLUME_NODE_RESOURCES, "The volume resources available.", tag=4),
)
CSI_NODE_SPEC = struct(
    STORAGE + "CSINodeSpec",
    "The CSI drivers installed on a node.",
    f(
        "drivers",
        Arr(CSI_NODE_DRIVER),
        "The drivers on the node.",
        required=True,
        merge="name",
        list_type="map",
        tag=1,
    ),
)
CSI_NODE = struct(
    STORAGE + "CSINode",
    "The CSI drivers installed on a node (named as the node).",
    *type_meta(),
    metadata_field(),
    f("spec", CSI_NODE_SPEC, "The drivers of the node.", required=True, tag=2),
)

CSI_STORAGE_CAPACITY = struct(
    STORAGE + "CSIStorageCapacity",
    "The capacity of one storage class in one topology segment, as a CSI driver reports it.",
    *type_meta(),
    metadata_field(),
    f("nodeTopology", LABEL_SELECTOR, "The nodes that have access to the storage.", tag=2),
    f(
        "storageClassName",
        "string",
        "The StorageClass the capacity applies to.",
        required=True,
        tag=3,
    ),
    f("capacity", "quantity", "The capacity reported by GetCapacity.", tag=4),
    f("maximumVolumeSize", "quantity", "The largest volume that may be created.", tag=5),
)

VOLUME_ERROR = struct(
    STORAGE + "VolumeError",
    "An error of a volume operation.",
    f("time", "time", "When the error was encountered.", tag=1),
    f("message", "string", "What went wrong.", tag=2),
    f("errorCode", "int32", "The gRPC code of the error.", tag=3, pointer=True),
)
VOLUME_ATTACHMENT_SOURCE = struct(
    STORAGE + "VolumeAttachmentSource",
    "The volume to attach: exactly one field is set.",
    f("persistentVolumeName", "string", "The PersistentVolume to attach.", tag=1, pointer=True),
    f(
        "inlineVolumeSpec",
        CORE + "PersistentVolumeSpec",
        "A pod's inline volume, translated to a PersistentVolumeSpec (CSI migration).",
        tag=2,
    ),
)
VOLUME_ATTACHMENT_SPEC = struct(
    STORAGE + "VolumeAttachmentSpec",
    "Which volume to attach to which node, by which driver.",
    f("attacher", "string", "The volume driver that attaches.", required=True, tag=1),
    f("source", VOLUME_ATTACHMENT_SOURCE, "The volume to attach.", required=True, tag=2),
    f("nodeName", "string", "The node to attach to.", required=True, tag=3),
)
VOLUME_ATTACHMENT_STATUS = struct(
    STORAGE + "VolumeAttachmentStatus",
    "The state of an attach or detach operation.",
    f("attached", "boolean", "The volume is attached.", required=True, tag=1),
    f("attachmentMetadata", Map("string"), "What the attach operation returned.", tag=2),
    f("attachError", VOLUME_ERROR, "The last attach error.", tag=3),
    f("detachError", VOLUME_ERROR, "The last detach error.", tag=4),
)
VOLUME_ATTACHMENT = struct(
    STORAGE + "VolumeAttachment",
    "The intent to attach a volume to a node.",
    *type_meta(),
    metadata_field(),
    f("spec", VOLUME_ATTACHMENT_SPEC, "What to attach where.", required=True, tag=2),
    f("status", VOLUME_ATTACHMENT_STATUS, "The state of the attachment.", emit=True, tag=3),
)

serve("storage.k8s.io", "v1", "StorageClass", STORAGE_CLASS)
serve("storage.k8s.io", "v1", "CSIDriver", CSI_DRIVER)
serve("storage.k8s.io", "v1", "CSINode", CSI_NODE)
serve("storage.k8s.io", "v1", "CSIStorageCapacity", CSI_STORAGE_CAPACITY)
serve("storage.k8s.io", "v1", "VolumeAttachment", VOLUME_ATTACHMENT)
