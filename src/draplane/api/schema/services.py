"""core/v1 Secret, Service and Endpoints, discovery.k8s.io/v1 EndpointSlice and meta/v1
Condition (Kubernetes 1.28)."""

from __future__ import annotations

from draplane.api.schema.core import OBJECT_REFERENCE
from draplane.api.schema.meta import META, metadata_field, serve, type_meta
from draplane.api.schema.model import Arr, Map, f, struct

CORE = "io.k8s.api.core.v1."
DISCOVERY = "io.k8s.api.discovery.v1."

CONDITION = struct(
    META + "Condition",
    "One aspect of an object's state (the meta/v1 condition type).",
    f("type", "string", "Type of the condition, in CamelCase.", required=True, tag=1),
    f("status", "string", "True, False or Unknown.", required=True, tag=2),
    f("observedGeneration", "int64", "The generation the condition was set for.", tag=3),
    f("lastTransitionTime", "time", "When the status last changed.", required=True, tag=4),
    f("reason", "string", "Machine-readable reason of the last transition.", required=True, tag=5),
    f("message", "string", "Human-readable detail of the last transition.", required=True, tag=6),
)
SECRET = struct(
    CORE + "Secret",
    "Sensitive data as keys and values.",
    *type_meta(),
    metadata_field(),
    f("immutable", "boolean", "Data can no longer be changed once true.", tag=5, pointer=True),
    f("data", Map("byte"), "Values, base64 encoded.", tag=2),
    f("stringData", Map("string"), "Write-only values in plain text, merged into data.", tag=4),
    f("type", "string", "How the data is to be used, e.g. kubernetes.io/tls.", tag=3),
)
SERVICE_PORT = struct(
    CORE + "ServicePort",
    "A port the Service exposes.",
    f("name", "string", "Name of the port, unique in the Service.", tag=1),
    f("protocol", "string", "TCP, UDP or SCTP.", enum=("SCTP", "TCP", "UDP"), tag=2),
    f("appProtocol", "string", "The application protocol of the port.", tag=6, pointer=True),
    f("port", "int32", "The port the Service exposes.", required=True, tag=3),
    f("targetPort", "intorstring", "The port (number or name) on the pods.", tag=4),
    f("nodePort", "int32", "The port on each node for NodePort and LoadBalancer Services.", tag=5),
)
SESSION_AFFINITY_CONFIG = struct(
    CORE + "SessionAffinityConfig",
    "Parameters of session affinity.",
    f(
        "clientIP",
        struct(
            CORE + "ClientIPConfig",
            "Parameters of ClientIP session affinity.",
            f("timeoutSeconds", "int32", "Seconds a session sticks.", tag=1, pointer=True),
        ),
        "ClientIP affinity parameters.",
        tag=1,
    ),
)
SERVICE_SPEC = struct(
    CORE + "ServiceSpec",
    "The desired state of a Service.",
    f(
        "ports",
        Arr(SERVICE_PORT),
        "The ports the Service exposes.",
        merge="port",
        list_type="map",
        map_keys=("port", "protocol"),
        tag=1,
    ),
    f("selector", Map("string"), "Labels of the pods traffic goes to.", map_type="atomic", tag=2),
    f("clusterIP", "string", "The Service's virtual IP; None for a headless Service.", tag=3),
    f(
        "clusterIPs",
        Arr("string"),
        "Its virtual IPs, one per IP family.",
        list_type="atomic",
        tag=18,
    ),
    f(
        "type",
        "string",
        "ClusterIP, NodePort, LoadBalancer or ExternalName.",
        enum=("ClusterIP", "ExternalName", "LoadBalancer", "NodePort"),
        tag=4,
    ),
    f("externalIPs", Arr("string"), "IPs outside the cluster that also reach the Service.", tag=5),
    f("sessionAffinity", "string", "ClientIP or None.", enum=("ClientIP", "None"), tag=7),
    f("loadBalancerIP", "string", "Deprecated: the requested load balancer IP.", tag=8),
    f("loadBalancerSourceRanges", Arr("string"), "Client ranges a load balancer admits.", tag=9),
    f("externalName", "string", "The DNS name an ExternalName Service aliases.", tag=10),
    f("externalTrafficPolicy", "string", "Cluster or Local routing of external traffic.", tag=11),
    f(
        "healthCheckNodePort",
        "int32",
        "The health-check node port of a Local LoadBalancer.",
        tag=12,
    ),
    f("publishNotReadyAddresses", "boolean", "DNS lists pods that are not ready.", tag=13),
    f("sessionAffinityConfig", SESSION_AFFINITY_CONFIG, "Parameters of session affinity.", tag=14),
    f(
        "ipFamilies",
        Arr("string"),
        "IPv4 and/or IPv6, in clusterIPs order.",
        list_type="atomic",
        tag=19,
    ),
    f(
        "ipFamilyPolicy",
        "string",
        "SingleStack, PreferDualStack or RequireDualStack.",
        enum=("PreferDualStack", "RequireDualStack", "SingleStack"),
        tag=17,
        pointer=True,
    ),
    f(
        "allocateLoadBalancerNodePorts",
        "boolean",
        "Allocate node ports for a LoadBalancer.",
        tag=20,
        pointer=True,
    ),
    f("loadBalancerClass", "string", "The load balancer implementation.", tag=21, pointer=True),
    f(
        "internalTrafficPolicy",
        "string",
        "Cluster or Local routing of in-cluster traffic.",
        tag=22,
        pointer=True,
    ),
)
PORT_STATUS = struct(
    CORE + "PortStatus",
    "The state of one port of a load balancer.",
    f("port", "int32", "The port number.", required=True, tag=1),
    f("protocol", "string", "TCP, UDP or SCTP.", required=True, tag=2),
    f("error", "string", "Why the port failed, if it did.", tag=3, pointer=True),
)
LOAD_BALANCER_STATUS = struct(
    CORE + "LoadBalancerStatus",
    "The state of a load balancer.",
    f(
        "ingress",
        Arr(
            struct(
                CORE + "LoadBalancerIngress",
                "An address traffic for the Service enters by.",
                f("ip", "string", "An IP address.", tag=1),
                f("hostname", "string", "A DNS name.", tag=2),
                f("ports", Arr(PORT_STATUS), "The state of its ports.", list_type="atomic", tag=4),
            )
        ),
        "The load balancer's ingress points.",
        tag=1,
    ),
)
SERVICE_STATUS = struct(
    CORE + "ServiceStatus",
    "The observed state of a Service.",
    f("loadBalancer", LOAD_BALANCER_STATUS, "The load balancer, if any.", emit=True, tag=1),
    f(
        "conditions",
        Arr(CONDITION),
        "Current observations of its state.",
        merge="type",
        list_type="map",
        tag=2,
    ),
)
SERVICE = struct(
    CORE + "Service",
    "A named, stable address for a set of pods, and its ports.",
    *type_meta(),
    metadata_field(),
    f("spec", SERVICE_SPEC, "Desired state.", emit=True, tag=2),
    f("status", SERVICE_STATUS, "Observed state.", emit=True, tag=3),
)

ENDPOINT_ADDRESS = struct(
    CORE + "EndpointAddress",
    "One address of an Endpoints subset.",
    f("ip", "string", "The IP of the endpoint.", required=True, tag=1),
    f("hostname", "string", "The hostname of the endpoint.", tag=3),
    f("nodeName", "string", "The node hosting the endpoint.", tag=4, pointer=True),
    f("targetRef", OBJECT_REFERENCE, "The object (usually a pod) behind the endpoint.", tag=2),
)
ENDPOINT_PORT = struct(
    CORE + "EndpointPort",
    "One port of an Endpoints subset.",
    f("name", "string", "Name of the port, matching a Service port's name.", tag=1),
    f("port", "int32", "The port number.", required=True, tag=2),
    f("protocol", "string", "TCP, UDP or SCTP.", enum=("SCTP", "TCP", "UDP"), tag=3),
    f("appProtocol", "string", "The application protocol of the port.", tag=4, pointer=True),
)
ENDPOINT_SUBSET = struct(
    CORE + "EndpointSubset",
    "Addresses that share a set of ports.",
    f("addresses", Arr(ENDPOINT_ADDRESS), "Ready addresses.", list_type="atomic", tag=1),
    f(
        "notReadyAddresses",
        Arr(ENDPOINT_ADDRESS),
        "Addresses not ready.",
        list_type="atomic",
        tag=2,
    ),
    f("ports", Arr(ENDPOINT_PORT), "The ports of the addresses.", list_type="atomic", tag=3),
)
ENDPOINTS = struct(
    CORE + "Endpoints",
    "The addresses and ports that implement a Service.",
    *type_meta(),
    metadata_field(),
    f(
        "subsets",
        Arr(ENDPOINT_SUBSET),
        "The sets of addresses and ports.",
        list_type="atomic",
        tag=2,
    ),
)

ENDPOINT_CONDITIONS = struct(
    DISCOVERY + "EndpointConditions",
    "The state of one endpoint.",
    f("ready", "boolean", "The endpoint accepts traffic.", tag=1, pointer=True),
    f(
        "serving",
        "boolean",
        "The endpoint serves, whether terminating or not.",
        tag=2,
        pointer=True,
    ),
    f("terminating", "boolean", "The endpoint is terminating.", tag=3, pointer=True),
)
ENDPOINT_HINTS = struct(
    DISCOVERY + "EndpointHints",
    "How the endpoint should be consumed.",
    f(
        "forZones",
        Arr(
            struct(
                DISCOVERY + "ForZone",
                "A zone the endpoint should serve.",
                f("name", "string", "The zone's name.", required=True, tag=1),
            )
        ),
        "Zones the endpoint should serve.",
        list_type="atomic",
        tag=1,
    ),
)
ENDPOINT = struct(
    DISCOVERY + "Endpoint",
    "One endpoint of an EndpointSlice.",
    f("addresses", Arr("string"), "Its addresses.", required=True, list_type="set", tag=1),
    f("conditions", ENDPOINT_CONDITIONS, "Its state.", emit=True, tag=2),
    f("hostname", "string", "Its hostname.", tag=3, pointer=True),
    f("targetRef", OBJECT_REFERENCE, "The object (usually a pod) behind it.", tag=4),
    f("deprecatedTopology", Map("string"), "Deprecated topology labels.", tag=5),
    f("nodeName", "string", "The node hosting it.", tag=6, pointer=True),
    f("zone", "string", "The zone it is in.", tag=7, pointer=True),
    f("hints", ENDPOINT_HINTS, "How it should be consumed.", tag=8),
)
DISCOVERY_ENDPOINT_PORT = struct(
    DISCOVERY + "EndpointPort",
    "One port of an EndpointSlice.",
    f("name", "string", "Name of the port, matching a Service port's name.", tag=1, pointer=True),
    f("protocol", "string", "TCP, UDP or SCTP.", tag=2, pointer=True),
    f("port", "int32", "The port number.", tag=3, pointer=True),
    f("appProtocol", "string", "The application protocol of the port.", tag=4, pointer=True),
)
ENDPOINT_SLICE = struct(
    DISCOVERY + "EndpointSlice",
    "A subset of the endpoints of a Service.",
    *type_meta(),
    metadata_field(),
    f(
        "addressType",
        "string",
        "IPv4, IPv6 or FQDN.",
        required=True,
        enum=("FQDN", "IPv4", "IPv6"),
        tag=4,
    ),
    f("endpoints", Arr(ENDPOINT), "The endpoints.", required=True, list_type="atomic", tag=2),
    f(
        "ports",
        Arr(DISCOVERY_ENDPOINT_PORT),
        "The ports of every endpoint.",
        list_type="atomic",
        tag=3,
    ),
)
serve("", "v1", "Secret", SECRET)
serve("", "v1", "Service", SERVICE)
serve("", "v1", "Endpoints", ENDPOINTS)
serve("discovery.k8s.io", "v1", "EndpointSlice", ENDPOINT_SLICE)
