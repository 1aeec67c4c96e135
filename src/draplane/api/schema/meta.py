"""meta/v1 structs every kind uses: ObjectMeta, ListMeta, Status, DeleteOptions, LabelSelector,
and the helpers that give a kind its TypeMeta and metadata fields."""

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
    f("apiVersion", "string", "API version of the owner.", required=True),
    f("kind", "string", "Kind of the owner.", required=True),
    f("name", "string", "Name of the owner.", required=True),
    f("uid", "string", "UID of the owner.", required=True),
    f("controller", "boolean", "True when the owner is the managing controller."),
    f("blockOwnerDeletion", "boolean", "Foreground deletion of the owner waits for this object."),
)
MANAGED_FIELDS_ENTRY = struct(
    META + "ManagedFieldsEntry",
    "The fields one manager owns after one kind of operation (server-side apply bookkeeping).",
    f("manager", "string", "The identifier of the workflow managing these fields."),
    f("operation", "string", "Apply or Update: the operation that set these fields."),
    f("apiVersion", "string", "The version of the fields' schema."),
    f("time", "time", "When these fields were last changed by this manager."),
    f("fieldsType", "string", "The format of fieldsV1; only FieldsV1."),
    f("fieldsV1", "object", "The set of owned fields, as a trie of field paths."),
    f("subresource", "string", "The subresource the fields were written through."),
)
OBJECT_META = struct(
    META + "ObjectMeta",
    "Metadata every persisted object has: name, namespace, labels, ownership, bookkeeping.",
    f("name", "string", "Unique name within the namespace (or cluster); cannot be updated."),
    f("generateName", "string", "Prefix for a server-generated name when name is empty."),
    f("namespace", "string", "The namespace of a namespaced object; empty for cluster-scoped."),
    f("selfLink", "string", "Deprecated; never set."),
    f("uid", "string", "Unique identity over the object's whole lifetime, set by the server."),
    f("resourceVersion", "string", "Opaque version for optimistic concurrency and watches."),
    f("generation", "int64", "Sequence number of the desired state, set by the server."),
    f("creationTimestamp", "time", "When the server created the object.", emit=True),
    f("deletionTimestamp", "time", "When graceful deletion completes; set by a delete request."),
    f("deletionGracePeriodSeconds", "int64", "Seconds allowed for graceful termination."),
    f("labels", Map("string"), "String keys and values for selection and grouping."),
    f("annotations", Map("string"), "Arbitrary non-identifying metadata set by tools."),
    f(
        "ownerReferences",
        Arr(OWNER_REFERENCE),
        "Objects this one depends on.",
        merge="uid",
        list_type="map",
    ),
    f(
        "finalizers",
        Arr("string"),
        "Entries that must be removed before the object is deleted.",
        patch_strategy="merge",
        list_type="set",
    ),
    f("managedFields", Arr(MANAGED_FIELDS_ENTRY), "Which manager owns which fields."),
)
LIST_META = struct(
    META + "ListMeta",
    "Metadata of a list: the version it was read at and the paging token.",
    f("selfLink", "string", "Deprecated; never set."),
    f("resourceVersion", "string", "The version the list was read at."),
    f("continue", "string", "Token to read the next page, if there is one."),
    f("remainingItemCount", "int64", "Items after this page, when known."),
)
LABEL_SELECTOR_REQUIREMENT = struct(
    META + "LabelSelectorRequirement",
    "A key, an operator and values, matched against labels.",
    f("key", "string", "The label key.", required=True),
    f("operator", "string", "In, NotIn, Exists or DoesNotExist.", required=True),
    f("values", Arr("string"), "Values for In and NotIn; empty for Exists and DoesNotExist."),
)
LABEL_SELECTOR = struct(
    META + "LabelSelector",
    "Selects objects by labels; all conditions must hold; empty matches everything.",
    f("matchLabels", Map("string"), "Labels that must be present with these values."),
    f("matchExpressions", Arr(LABEL_SELECTOR_REQUIREMENT), "Requirements on labels."),
)
STATUS_CAUSE = struct(
    META + "StatusCause",
    "One reason a request failed, often naming the field at fault.",
    f("reason", "string", "Machine-readable cause."),
    f("message", "string", "Human-readable cause."),
    f("field", "string", "Path of the field at fault, e.g. spec.containers[0].name."),
)
STATUS_DETAILS = struct(
    META + "StatusDetails",
    "Extra data of a Status about the object the request named.",
    f("name", "string", "Name of the object."),
    f("group", "string", "API group of the object."),
    f("kind", "string", "Kind of the object."),
    f("uid", "string", "UID of the object."),
    f("causes", Arr(STATUS_CAUSE), "The individual causes of the failure."),
    f("retryAfterSeconds", "int32", "Seconds a client should wait before retrying."),
)
STATUS = struct(
    META + "Status",
    "The result of a call that returns no object: success or a failure with its reason.",
    *type_meta(),
    f("metadata", LIST_META, "Standard list metadata.", emit=True),
    f("status", "string", "Success or Failure."),
    f("message", "string", "Human-readable description of the result."),
    f("reason", "string", "Machine-readable reason (NotFound, Conflict, ...)."),
    f("details", STATUS_DETAILS, "Data about the object the failure is about."),
    f("code", "int32", "The HTTP status code of this result."),
)
PRECONDITIONS = struct(
    META + "Preconditions",
    "Conditions a delete requires of the stored object.",
    f("uid", "string", "The object must have this UID."),
    f("resourceVersion", "string", "The object must be at this resourceVersion."),
)
DELETE_OPTIONS = struct(
    META + "DeleteOptions",
    "Options of a delete request.",
    *type_meta(),
    f("gracePeriodSeconds", "int64", "Seconds before the object is removed; 0 removes now."),
    f("preconditions", PRECONDITIONS, "Conditions that must hold for the delete to happen."),
    f("orphanDependents", "boolean", "Deprecated: orphan dependents instead of deleting them."),
    f("propagationPolicy", "string", "Orphan, Background or Foreground garbage collection."),
    f("dryRun", Arr("string"), "All: process the request without persisting it."),
)


def metadata_field() -> Field:
    return f("metadata", OBJECT_META, "Standard object metadata.", emit=True)


def list_metadata_field() -> Field:
    return f("metadata", LIST_META, "Standard list metadata.", emit=True)


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
            f("items", Arr(struct_name), f"The {kind} objects.", required=True),
        )
        register_kind(group, version, kind + "List", list_name)
