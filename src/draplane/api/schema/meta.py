"""meta/v1 structs every kind uses: ObjectMeta, ListMeta, Status, DeleteOptions, LabelSelector,
WatchEvent, PartialObjectMetadata, and the helpers that give a kind its TypeMeta and metadata
fields. Field numbers (`tag`) are those of apimachinery's meta/v1 generated.proto."""

from __future__ import annotations

from draplane.api.schema.model import Arr, Field, Map, f, register_kind, struct

META = "io.k8s.apimachinery.pkg.apis.meta.v1."


def type_meta() -> tuple[Field, Field]:
    return (
        f("apiVersion", "string", "The versioned schema of this representation of an object."),
        f("kind", "string", "The REST resource this object represents, in CamelCase."),
    )


OWNER_REFERENCE = struct(
    META + "OwnerReference",
    "Identifies an owning object; the owned object is garbage-collected with its owner.",
    f("apiVersion", "string", "API version of the owner.", required=True, tag=5),
    f("kind", "string", "Kind of the owner.", required=True, tag=1),
    f("name", "string", "Name of the owner.", required=True, tag=3),
    f("uid", "string", "UID of the owner.", required=True, tag=4),
    f(
        "controller",
        "boolean",
        "True when the owner is the managing controller.",
        tag=6,
        pointer=True,
    ),
    f(
        "blockOwnerDeletion",
        "boolean",
        "Foreground deletion of the owner waits for this object.",
        tag=7,
        pointer=True,
    ),
)
MANAGED_FIELDS_ENTRY = struct(
    META + "ManagedFieldsEntry",
    "The fields one manager owns after one kind of operation (server-side apply bookkeeping).",
    f("manager", "string", "The identifier of the workflow managing these fields.", tag=1),
    f("operation", "string", "Apply or Update: the operation that set these fields.", tag=2),
    f("apiVersion", "string", "The version of the fields' schema.", tag=3),
    f("time", "time", "When these fields were last changed by this manager.", tag=4),
    f("fieldsType", "string", "The format of fieldsV1; only FieldsV1.", tag=6),
    f(
        "fieldsV1",
        "object",
        "The set of owned fields, as a trie of field paths.",
        tag=7,
        wire="raw",
    ),
    f("subresource", "string", "The subresource the fields were written through.", tag=8),
)
OBJECT_META = struct(
    META + "ObjectMeta",
    "Metadata every persisted object has: name, namespace, labels, ownership, bookkeeping.",
    f("name", "string", "Unique name within the namespace (or cluster); cannot be updated.", tag=1),
    f("generateName", "string", "Prefix for a server-generated name when name is empty.", tag=2),
    f(
        "namespace",
        "string",
        "The namespace of a namespaced object; empty for cluster-scoped.",
        tag=3,
    ),
    f("selfLink", "string", "Deprecated; never set.", tag=4),
    f(
        "uid",
        "string",
        "Unique identity over the object's whole lifetime, set by the server.",
        tag=5,
    ),
    f("resourceVersion", "string", "Opaque version for optimistic concurrency and watches.", tag=6),
    f("generation", "int64", "Sequence number of the desired state, set by the server.", tag=7),
    f("creationTimestamp", "time", "When the server created the object.", emit=True, tag=8),
    f(
        "deletionTimestamp",
        "time",
        "When graceful deletion completes; set by a delete request.",
        tag=9,
    ),
    f(
        "deletionGracePeriodSeconds",
        "int64",
        "Seconds allowed for graceful termination.",
        tag=10,
        pointer=True,
    ),
    f("labels", Map("string"), "String keys and values for selection and grouping.", tag=11),
    f("annotations", Map("string"), "Arbitrary non-identifying metadata set by tools.", tag=12),
    f(
        "ownerReferences",
        Arr(OWNER_REFERENCE),
        "Objects this one depends on.",
        merge="uid",
        list_type="map",
        tag=13,
    ),
    f(
        "finalizers",
        Arr("string"),
        "Entries that must be removed before the object is deleted.",
        patch_strategy="merge",
        list_type="set",
        tag=14,
    ),
    f("managedFields", Arr(MANAGED_FIELDS_ENTRY), "Which manager owns which fields.", tag=17),
)
LIST_META = struct(
    META + "ListMeta",
    "Metadata of a list: the version it was read at and the paging token.",
    f("selfLink", "string", "Deprecated; never set.", tag=1),
    f("resourceVersion", "string", "The version the list was read at.", tag=2),
    f("continue", "string", "Token to read the next page, if there is one.", tag=3),
    f("remainingItemCount", "int64", "Items after this page, when known.", tag=4, pointer=True),
)
LABEL_SELECTOR_REQUIREMENT = struct(
    META + "LabelSelectorRequirement",
    "A key, an operator and values, matched against labels.",
    f("key", "string", "The label key.", required=True, tag=1),
    f("operator", "string", "In, NotIn, Exists or DoesNotExist.", required=True, tag=2),
    f(
        "values",
        Arr("string"),
        "Values for In and NotIn; empty for Exists and DoesNotExist.",
        tag=3,
    ),
)
LABEL_SELECTOR = struct(
    META + "LabelSelector",
    "Selects objects by labels; all conditions must hold; empty matches everything.",
    f("matchLabels", Map("string"), "Labels that must be present with these values.", tag=1),
    f("matchExpressions", Arr(LABEL_SELECTOR_REQUIREMENT), "Requirements on labels.", tag=2),
)
STATUS_CAUSE = struct(
    META + "StatusCause",
    "One reason a request failed, often naming the field at fault.",
    f("reason", "string", "Machine-readable cause.", tag=1),
    f("message", "string", "Human-readable cause.", tag=2),
    f("field", "string", "Path of the field at fault, e.g. spec.containers[0].name.", tag=3),
)
STATUS_DETAILS = struct(
    META + "StatusDetails",
    "Extra data of a Status about the object the request named.",
    f("name", "string", "Name of the object.", tag=1),
    f("group", "string", "API group of the object.", tag=2),
    f("kind", "string", "Kind of the object.", tag=3),
    f("uid", "string", "UID of the object.", tag=6),
    f("causes", Arr(STATUS_CAUSE), "The individual causes of the failure.", tag=4),
    f("retryAfterSeconds", "int32", "Seconds a client should wait before retrying.", tag=5),
)
STATUS = struct(
    META + "Status",
    "The result of a call that returns no object: success or a failure with its reason.",
    *type_meta(),
    f("metadata", LIST_META, "Standard list metadata.", emit=True, tag=1),
    f("status", "string", "Success or Failure.", tag=2),
    f("message", "string", "Human-readable description of the result.", tag=3),
    f("reason", "string", "Machine-readable reason (NotFound, Conflict, ...).", tag=4),
    f("details", STATUS_DETAILS, "Data about the object the failure is about.", tag=5),
    f("code", "int32", "The HTTP status code of this result.", tag=6),
)
PRECONDITIONS = struct(
    META + "Preconditions",
    "Conditions a delete requires of the stored object.",
    f("uid", "string", "The object must have this UID.", tag=1, pointer=True),
    f(
        "resourceVersion",
        "string",
        "The object must be at this resourceVersion.",
        tag=2,
        pointer=True,
    ),
)
DELETE_OPTIONS = struct(
    META + "DeleteOptions",
    "Options of a delete request.",
    *type_meta(),
    f(
        "gracePeriodSeconds",
        "int64",
        "Seconds before the object is removed; 0 removes now.",
        tag=1,
        pointer=True,
    ),
    f("preconditions", PRECONDITIONS, "Conditions that must hold for the delete to happen.", tag=2),
    f(
        "orphanDependents",
        "boolean",
        "Deprecated: orphan dependents instead of deleting them.",
        tag=3,
        pointer=True,
    ),
    f(
        "propagationPolicy",
        "string",
        "Orphan, Background or Foreground garbage collection.",
        tag=4,
        pointer=True,
    ),
    f("dryRun", Arr("string"), "All: process the request without persisting it.", tag=5),
)

WATCH_EVENT = struct(
    META + "WatchEvent",
    "One event of a watch stream: its type and the object it is about.",
    f("type", "string", "ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.", required=True, tag=1),
    f("object", "json", "The object (a Status for ERROR).", required=True, tag=2, wire="raw"),
)
PARTIAL_OBJECT_METADATA = struct(
    META + "PartialObjectMetadata",
    "The metadata of an object, without its spec or status (`as=PartialObjectMetadata`).",
    *type_meta(),
    f("metadata", OBJECT_META, "Standard object metadata.", emit=True, tag=1),
)
PARTIAL_OBJECT_METADATA_LIST = struct(
    META + "PartialObjectMetadataList",
    "A list of objects' metadata (`as=PartialObjectMetadataList`).",
    *type_meta(),
    f("metadata", LIST_META, "Standard list metadata.", emit=True, tag=1),
    f("items", Arr(PARTIAL_OBJECT_METADATA), "The objects' metadata.", required=True, tag=2),
)


def metadata_field() -> Field:
    return f("metadata", OBJECT_META, "Standard object metadata.", emit=True, tag=1)


def list_metadata_field() -> Field:
    return f("metadata", LIST_META, "Standard list metadata.", emit=True, tag=1)


def serve(group: str, version: str, kind: str, struct_name: str, *, with_list: bool = True) -> None:
    """Register `struct_name` as the schema of group/version/kind and, unless `with_list` is
    off, a `<Name>List` struct as the schema of `<kind>List`."""
    register_kind(group, version, kind, struct_name)
    if with_list:
        list_name = struct(
            struct_name + "List",
            f"A list of {kind} objects.",
            *type_meta(),
            list_metadata_field(),
            f("items", Arr(struct_name), f"The {kind} objects.", required=True, tag=2),
        )
        register_kind(group, version, kind + "List", list_name)
