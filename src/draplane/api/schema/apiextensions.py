"""apiextensions.k8s.io/v1: CustomResourceDefinition, as upstream's Go types
(k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1), with their generated.proto field
numbers.

`JSONSchemaProps` is recursive and free-form: in JSON, `openAPIV3Schema` is modelled as an
object that keeps any fields, and the structural checks of `draplane.api.validation.apiextensions`
type it. Its protobuf form is the `JSONSchemaProps` struct below, which only the openAPIV3Schema
field's `wire` names (no JSON type refers to it, so decoding, OpenAPI and patches never see it).
"""

from __future__ import annotations

from draplane.api.schema.meta import metadata_field, serve, type_meta
from draplane.api.schema.model import Arr, Field, Map, f, struct

APIEXT = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."

NAMES = struct(
    APIEXT + "CustomResourceDefinitionNames",
    "The names with which a custom resource is served.",
    f(
        "plural",
        "string",
        "The plural name of the resource, in the URL path.",
        required=True,
        tag=1,
    ),
    f("singular", "string", "The singular name; defaults to the lowercased kind.", tag=2),
    f("shortNames", Arr("string"), "Short names, e.g. for kubectl get.", list_type="atomic", tag=3),
    f("kind", "string", "The serialized kind, in CamelCase.", required=True, tag=4),
    f("listKind", "string", "The serialized kind of lists; defaults to <kind>List.", tag=5),
    f("categories", Arr("string"), "Grouped resources, e.g. all.", list_type="atomic", tag=6),
)
JSON_SCHEMA_PROPS = APIEXT + "JSONSchemaProps"
EXTERNAL_DOCUMENTATION = struct(
    APIEXT + "ExternalDocumentation",
    "A reference to external documentation.",
    f("description", "string", "What the documentation is about.", tag=1),
    f("url", "string", "Where it is.", tag=2),
)
VALIDATION_RULE = struct(
    APIEXT + "ValidationRule",
    "A validation rule written in CEL (an x-kubernetes-validations item).",
    f("rule", "string", "The CEL expression; self is the value at the rule's place.", tag=1),
    f("message", "string", "The message shown when the rule fails.", tag=2),
    f("messageExpression", "string", "A CEL expression producing the message.", tag=3),
    f("reason", "string", "The reason of the failure's cause.", tag=4, pointer=True),
    f("fieldPath", "string", "The field the failure is reported at.", tag=5),
    f(
        "optionalOldSelf",
        "boolean",
        "Evaluate on create too, oldSelf then absent.",
        tag=6,
        pointer=True,
    ),
)


def _schemas(name: str, tag: int, what: str) -> Field:
    return f(name, Arr(JSON_SCHEMA_PROPS), what, tag=tag)


# The protobuf form of openAPIV3Schema. JSON values (default, example, each enum item) are an
# apiextensions JSON message (`wire="raw"`); items, additionalProperties, additionalItems and
# dependencies hold a schema or a bool/list in JSON and the JSONSchemaPropsOr* messages on the
# wire (`wire="schemaorarray"`, `"schemaorbool"`, `"schemaorstringarray"`, model.Field;
# a schema given for a bool sets `allows` too, as upstream's UnmarshalJSON does).
struct(
    JSON_SCHEMA_PROPS,
    "A JSON Schema (draft 4) with Kubernetes' x-kubernetes-* extensions.",
    f("id", "string", "The schema's id.", tag=1),
    f("$schema", "string", "The JSON Schema version URL.", tag=2),
    f("$ref", "string", "A reference to another schema.", tag=3, pointer=True),
    f("description", "string", "What the value is.", tag=4),
    f("type", "string", "object, array, string, integer, number or boolean.", tag=5),
    f("format", "string", "The OpenAPI format of a string or number.", tag=6),
    f("title", "string", "A title.", tag=7),
    f("default", "json", "The default of an absent value.", tag=8, wire="raw"),
    f("maximum", "double", "The largest number allowed.", tag=9, pointer=True),
    f("exclusiveMaximum", "boolean", "The maximum itself is not allowed.", tag=10),
    f("minimum", "double", "The smallest number allowed.", tag=11, pointer=True),
    f("exclusiveMinimum", "boolean", "The minimum itself is not allowed.", tag=12),
    f("maxLength", "int64", "The longest string allowed.", tag=13, pointer=True),
    f("minLength", "int64", "The shortest string allowed.", tag=14, pointer=True),
    f("pattern", "string", "A regular expression strings match.", tag=15),
    f("maxItems", "int64", "The most array items allowed.", tag=16, pointer=True),
    f("minItems", "int64", "The fewest array items allowed.", tag=17, pointer=True),
    f("uniqueItems", "boolean", "Array items are distinct.", tag=18),
    f("multipleOf", "double", "Numbers are multiples of it.", tag=19, pointer=True),
    f("enum", Arr("json"), "The values allowed.", tag=20, wire="raw"),
    f("maxProperties", "int64", "The most object properties allowed.", tag=21, pointer=True),
    f("minProperties", "int64", "The fewest object properties allowed.", tag=22, pointer=True),
    f("required", Arr("string"), "Properties an object must have.", tag=23),
    f(
        "items",
        "json",
        "The schema of array items (a schema or a list).",
        tag=24,
        wire="schemaorarray",
    ),
    _schemas("allOf", 25, "Schemas the value matches all of."),
    _schemas("oneOf", 26, "Schemas the value matches exactly one of."),
    _schemas("anyOf", 27, "Schemas the value matches one or more of."),
    f("not", JSON_SCHEMA_PROPS, "A schema the value does not match.", tag=28),
    f("properties", Map(JSON_SCHEMA_PROPS), "The schemas of an object's properties.", tag=29),
    f(
        "additionalProperties",
        "json",
        "The schema of other properties, or whether they are allowed.",
        tag=30,
        wire="schemaorbool",
    ),
    f(
        "patternProperties",
        Map(JSON_SCHEMA_PROPS),
        "The schemas of properties by name pattern.",
        tag=31,
    ),
    f(
        "dependencies",
        Map("json"),
        "Per property: a schema or the properties it requires.",
        tag=32,
        wire="schemaorstringarray",
    ),
    f(
        "additionalItems",
        "json",
        "The schema of other array items, or whether they are allowed.",
        tag=33,
        wire="schemaorbool",
    ),
    f("definitions", Map(JSON_SCHEMA_PROPS), "Schemas referred to by $ref.", tag=34),
    f("externalDocs", EXTERNAL_DOCUMENTATION, "External documentation.", tag=35),
    f("example", "json", "An example value.", tag=36, wire="raw"),
    f("nullable", "boolean", "null is allowed.", tag=37),
    f(
        "x-kubernetes-preserve-unknown-fields",
        "boolean",
        "Unknown fields are kept, not pruned.",
        tag=38,
        pointer=True,
    ),
    f("x-kubernetes-embedded-resource", "boolean", "The value is an embedded object.", tag=39),
    f("x-kubernetes-int-or-string", "boolean", "The value is an integer or a string.", tag=40),
    f(
        "x-kubernetes-list-map-keys",
        Arr("string"),
        "The keys of a map-type list.",
        list_type="atomic",
        tag=41,
    ),
    f("x-kubernetes-list-type", "string", "atomic, set or map.", tag=42, pointer=True),
    f("x-kubernetes-map-type", "string", "granular or atomic.", tag=43, pointer=True),
    f(
        "x-kubernetes-validations",
        Arr(VALIDATION_RULE),
        "CEL validation rules.",
        merge="rule",
        list_type="map",
        tag=44,
    ),
)
VALIDATION = struct(
    APIEXT + "CustomResourceValidation",
    "The schema of a custom resource version.",
    f(
        "openAPIV3Schema",
        "object",
        "The OpenAPI v3 schema (JSONSchemaProps) for validation and pruning.",
        tag=1,
        wire=JSON_SCHEMA_PROPS,
    ),
)
SUBRESOURCE_STATUS = struct(
    APIEXT + "CustomResourceSubresourceStatus",
    "Enables the status subresource: writes to /status change only .status.",
)
SUBRESOURCE_SCALE = struct(
    APIEXT + "CustomResourceSubresourceScale",
    "Enables the scale subresource: where the replicas and the selector are.",
    f("specReplicasPath", "string", "JSON path of the desired replicas.", required=True, tag=1),
    f("statusReplicasPath", "string", "JSON path of the observed replicas.", required=True, tag=2),
    f(
        "labelSelectorPath",
        "string",
        "JSON path of the label selector, as a string.",
        tag=3,
        pointer=True,
    ),
)
SUBRESOURCES = struct(
    APIEXT + "CustomResourceSubresources",
    "The subresources a custom resource version serves.",
    f("status", SUBRESOURCE_STATUS, "The status subresource.", tag=1),
    f("scale", SUBRESOURCE_SCALE, "The scale subresource.", tag=2),
)
COLUMN = struct(
    APIEXT + "CustomResourceColumnDefinition",
    "A column of the server-side table printing.",
    f("name", "string", "Human-readable name of the column.", required=True, tag=1),
    f("type", "string", "OpenAPI type of the column.", required=True, tag=2),
    f("format", "string", "OpenAPI format of the column.", tag=3),
    f("description", "string", "Human-readable description of the column.", tag=4),
    f("priority", "int32", "0 for the standard view, greater for wide output.", tag=5),
    f(
        "jsonPath",
        "string",
        "Simple JSON path evaluated against each object.",
        required=True,
        tag=6,
    ),
)
SELECTABLE_FIELD = struct(
    APIEXT + "SelectableField",
    "A field usable in field selectors.",
    f(
        "jsonPath",
        "string",
        "JSON path of a string, integer or boolean field.",
        required=True,
        tag=1,
    ),
)
VERSION = struct(
    APIEXT + "CustomResourceDefinitionVersion",
    "One version of a custom resource.",
    f("name", "string", "The version name, e.g. v1 or v2beta1.", required=True, tag=1),
    f("served", "boolean", "Whether the version is served by the REST API.", required=True, tag=2),
    f("storage", "boolean", "Whether objects are stored at this version.", required=True, tag=3),
    f("deprecated", "boolean", "Whether the version is deprecated (responses warn).", tag=7),
    f("deprecationWarning", "string", "Overrides the deprecation warning.", tag=8, pointer=True),
    f("schema", VALIDATION, "The schema for validation, pruning and defaulting.", tag=4),
    f("subresources", SUBRESOURCES, "The subresources the version serves.", tag=5),
    f(
        "additionalPrinterColumns",
        Arr(COLUMN),
        "Columns of table output.",
        list_type="atomic",
        tag=6,
    ),
    f(
        "selectableFields",
        Arr(SELECTABLE_FIELD),
        "Fields usable in field selectors.",
        list_type="atomic",
        tag=9,
    ),
)
SERVICE_REFERENCE = struct(
    APIEXT + "ServiceReference",
    "A reference to a Service.",
    f("namespace", "string", "The namespace of the service.", required=True, tag=1),
    f("name", "string", "The name of the service.", required=True, tag=2),
    f("path", "string", "URL path of requests to the service.", tag=3, pointer=True),
    f("port", "int32", "The port of the service; defaults to 443.", tag=4, pointer=True),
)
WEBHOOK_CLIENT_CONFIG = struct(
    APIEXT + "WebhookClientConfig",
    "How to reach a webhook: a URL or a service, and the CA bundle.",
    f("url", "string", "The URL of the webhook.", tag=3, pointer=True),
    f("service", SERVICE_REFERENCE, "The service of the webhook.", tag=1),
    f("caBundle", "byte", "PEM-encoded CA bundle to verify the webhook's certificate.", tag=2),
)
WEBHOOK_CONVERSION = struct(
    APIEXT + "WebhookConversion",
    "The conversion webhook.",
    f("clientConfig", WEBHOOK_CLIENT_CONFIG, "How to call the webhook.", tag=2),
    f(
        "conversionReviewVersions",
        Arr("string"),
        "ConversionReview versions the webhook accepts.",
        required=True,
        list_type="atomic",
        tag=3,
    ),
)
CONVERSION = struct(
    APIEXT + "CustomResourceConversion",
    "How objects are converted between versions.",
    f("strategy", "string", "None or Webhook.", required=True, enum=("None", "Webhook"), tag=1),
    f("webhook", WEBHOOK_CONVERSION, "The webhook, for strategy Webhook.", tag=2),
)
SPEC = struct(
    APIEXT + "CustomResourceDefinitionSpec",
    "The custom resource: its group, names, scope and versions.",
    f("group", "string", "The API group of the resource.", required=True, tag=1),
    f("names", NAMES, "The names of the resource.", required=True, tag=3),
    f("scope", "string", "Cluster or Namespaced.", required=True, tag=4),
    f(
        "versions",
        Arr(VERSION),
        "The served versions; exactly one is the storage version.",
        required=True,
        list_type="atomic",
        tag=7,
    ),
    f("conversion", CONVERSION, "How objects are converted between versions.", tag=9),
    f("preserveUnknownFields", "boolean", "Deprecated: must be false in apiextensions/v1.", tag=10),
)
CONDITION = struct(
    APIEXT + "CustomResourceDefinitionCondition",
    "A condition of a CustomResourceDefinition (Established, NamesAccepted, Terminating).",
    f("type", "string", "The type of the condition.", required=True, tag=1),
    f("status", "string", "True, False or Unknown.", required=True, tag=2),
    f("lastTransitionTime", "time", "When the status last changed.", tag=3),
    f("reason", "string", "Machine-readable reason of the last transition.", tag=4),
    f("message", "string", "Human-readable details of the last transition.", tag=5),
)
STATUS = struct(
    APIEXT + "CustomResourceDefinitionStatus",
    "The observed state of a CustomResourceDefinition.",
    f(
        "conditions",
        Arr(CONDITION),
        "The current conditions.",
        list_type="map",
        map_keys=("type",),
        tag=1,
    ),
    f(
        "acceptedNames",
        NAMES,
        "The names actually served (they may differ from spec.names).",
        tag=2,
    ),
    f("storedVersions", Arr("string"), "Versions objects have ever been stored at.", tag=3),
)
CUSTOM_RESOURCE_DEFINITION = struct(
    APIEXT + "CustomResourceDefinition",
    "A custom resource served by the API server under the name <plural>.<group>.",
    *type_meta(),
    metadata_field(),
    f("spec", SPEC, "The resource's group, names, scope and versions.", required=True, tag=2),
    f("status", STATUS, "The observed state of the definition.", tag=3),
)
serve("apiextensions.k8s.io", "v1", "CustomResourceDefinition", CUSTOM_RESOURCE_DEFINITION)
