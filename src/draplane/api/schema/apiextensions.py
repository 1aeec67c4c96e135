"""apiextensions.k8s.io/v1: CustomResourceDefinition, as upstream's Go types
(k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1).

`JSONSchemaProps` is recursive and free-form: `openAPIV3Schema` is modelled as an object that
keeps any fields, and the structural checks of `draplane.api.validation.apiextensions` type it.
"""

from __future__ import annotations

from draplane.api.schema.meta import metadata_field, serve, type_meta
from draplane.api.schema.model import Arr, f, struct

APIEXT = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."

NAMES = struct(
    APIEXT + "CustomResourceDefinitionNames",
    "The names with which a custom resource is served.",
    f("plural", "string", "The plural name of the resource, in the URL path.", required=True),
    f("singular", "string", "The singular name; defaults to the lowercased kind."),
    f("shortNames", Arr("string"), "Short names, e.g. for kubectl get.", list_type="atomic"),
    f("kind", "string", "The serialized kind, in CamelCase.", required=True),
    f("listKind", "string", "The serialized kind of lists; defaults to <kind>List."),
    f("categories", Arr("string"), "Grouped resources, e.g. all.", list_type="atomic"),
)
VALIDATION = struct(
    APIEXT + "CustomResourceValidation",
    "The schema of a custom resource version.",
    f(
        "openAPIV3Schema",
        "object",
        "The OpenAPI v3 schema (JSONSchemaProps) for validation and pruning.",
    ),
)
SUBRESOURCE_STATUS = struct(
    APIEXT + "CustomResourceSubresourceStatus",
    "Enables the status subresource: writes to /status change only .status.",
)
SUBRESOURCE_SCALE = struct(
    APIEXT + "CustomResourceSubresourceScale",
    "Enables the scale subresource: where the replicas and the selector are.",
    f("specReplicasPath", "string", "JSON path of the desired replicas.", required=True),
    f("statusReplicasPath", "string", "JSON path of the observed replicas.", required=True),
    f("labelSelectorPath", "string", "JSON path of the label selector, as a string."),
)
SUBRESOURCES = struct(
    APIEXT + "CustomResourceSubresources",
    "The subresources a custom resource version serves.",
    f("status", SUBRESOURCE_STATUS, "The status subresource."),
    f("scale", SUBRESOURCE_SCALE, "The scale subresource."),
)
COLUMN = struct(
    APIEXT + "CustomResourceColumnDefinition",
    "A column of the server-side table printing.",
    f("name", "string", "Human-readable name of the column.", required=True),
    f("type", "string", "OpenAPI type of the column.", required=True),
    f("format", "string", "OpenAPI format of the column."),
    f("description", "string", "Human-readable description of the column."),
    f("priority", "int32", "0 for the standard view, greater for wide output."),
    f("jsonPath", "string", "Simple JSON path evaluated against each object.", required=True),
)
SELECTABLE_FIELD = struct(
    APIEXT + "SelectableField",
    "A field usable in field selectors.",
    f("jsonPath", "string", "JSON path of a string, integer or boolean field.", required=True),
)
VERSION = struct(
    APIEXT + "CustomResourceDefinitionVersion",
    "One version of a custom resource.",
    f("name", "string", "The version name, e.g. v1 or v2beta1.", required=True),
    f("served", "boolean", "Whether the version is served by the REST API.", required=True),
    f("storage", "boolean", "Whether objects are stored at this version.", required=True),
    f("deprecated", "boolean", "Whether the version is deprecated (responses warn)."),
    f("deprecationWarning", "string", "Overrides the deprecation warning."),
    f("schema", VALIDATION, "The schema for validation, pruning and defaulting."),
    f("subresources", SUBRESOURCES, "The subresources the version serves."),
    f(
        "additionalPrinterColumns",
        Arr(COLUMN),
        "Columns of table output.",
        list_type="atomic",
    ),
    f(
        "selectableFields",
        Arr(SELECTABLE_FIELD),
        "Fields usable in field selectors.",
        list_type="atomic",
    ),
)
SERVICE_REFERENCE = struct(
    APIEXT + "ServiceReference",
    "A reference to a Service.",
    f("namespace", "string", "The namespace of the service.", required=True),
    f("name", "string", "The name of the service.", required=True),
    f("path", "string", "URL path of requests to the service."),
    f("port", "int32", "The port of the service; defaults to 443."),
)
WEBHOOK_CLIENT_CONFIG = struct(
    APIEXT + "WebhookClientConfig",
    "How to reach a webhook: a URL or a service, and the CA bundle.",
    f("url", "string", "The URL of the webhook."),
    f("service", SERVICE_REFERENCE, "The service of the webhook."),
    f("caBundle", "byte", "PEM-encoded CA bundle to verify the webhook's certificate."),
)
WEBHOOK_CONVERSION = struct(
    APIEXT + "WebhookConversion",
    "The conversion webhook.",
    f("clientConfig", WEBHOOK_CLIENT_CONFIG, "How to call the webhook."),
    f(
        "conversionReviewVersions",
        Arr("string"),
        "ConversionReview versions the webhook accepts.",
        required=True,
        list_type="atomic",
    ),
)
CONVERSION = struct(
    APIEXT + "CustomResourceConversion",
    "How objects are converted between versions.",
    f("strategy", "string", "None or Webhook.", required=True, enum=("None", "Webhook")),
    f("webhook", WEBHOOK_CONVERSION, "The webhook, for strategy Webhook."),
)
SPEC = struct(
    APIEXT + "CustomResourceDefinitionSpec",
    "The custom resource: its group, names, scope and versions.",
    f("group", "string", "The API group of the resource.", required=True),
    f("names", NAMES, "The names of the resource.", required=True),
    f("scope", "string", "Cluster or Namespaced.", required=True),
    f(
        "versions",
        Arr(VERSION),
        "The served versions; exactly one is the storage version.",
        required=True,
        list_type="atomic",
    ),
    f("conversion", CONVERSION, "How objects are converted between versions."),
    f("preserveUnknownFields", "boolean", "Deprecated: must be false in apiextensions/v1."),
)
CONDITION = struct(
    APIEXT + "CustomResourceDefinitionCondition",
    "A condition of a CustomResourceDefinition (Established, NamesAccepted, Terminating).",
    f("type", "string", "The type of the condition.", required=True),
    f("status", "string", "True, False or Unknown.", required=True),
    f("lastTransitionTime", "time", "When the status last changed."),
    f("reason", "string", "Machine-readable reason of the last transition."),
    f("message", "string", "Human-readable details of the last transition."),
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
    ),
    f("acceptedNames", NAMES, "The names actually served (they may differ from spec.names)."),
    f("storedVersions", Arr("string"), "Versions objects have ever been stored at."),
)
CUSTOM_RESOURCE_DEFINITION = struct(
    APIEXT + "CustomResourceDefinition",
    "A custom resource served by the API server under the name <plural>.<group>.",
    *type_meta(),
    metadata_field(),
    f("spec", SPEC, "The resource's group, names, scope and versions.", required=True),
    f("status", STATUS, "The observed state of the definition."),
)
serve("apiextensions.k8s.io", "v1", "CustomResourceDefinition", CUSTOM_RESOURCE_DEFINITION)
