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
    f("type", "string", "Type of the condition, in CamelCase.", required=True),
    f("status", "string", "True, False or Unknown.", required=True),
    f("observedGeneration", "int64", "The generation the condition was set for."),
    f("lastTransitionTime", "time", "When the status last changed.", required=True),
    f("reason", "string", "Machine-readable reason of the last transition.", required=True),
    f("message", "string", "Human-readable detail of the last transition.", required=True),
)
SECRET = struct(
    CORE + "Secret",
    "Sensitive data as keys and values.",
    *type_meta(),
    metadata_field(),
    f("immutable", "boolean", "Data can no longer be changed once true."),
    f("data", Map("byte"), "Values, base64 encoded."),
    f("stringData", Map("string"), "Write-only values in plain text, merged into data."),
    f("type", "string", "How the data is to be used, e.g. kubernetes.io/tls."),
)
SERVICE_PORT = struct(
    CORE + "ServicePort",
    "A port the Service exposes.",
    f("name", "string", "Name of the port, unique in the Service."),
    f("protocol", "string", "TCP, UDP or SCTP.", enum=("SCTP", "TCP", "UDP")),
    f("appProtocol", "string", "The application protocol of the port."),
    f("port", "int32", "The port the Service exposes.", required=True),
    f("targetPort", "intorstring", "The port (number or name) on the pods."),
    f("nodePort", "int32", "The port on each node for NodePort and LoadBalancer Services."),
)
SESSION_AFFINITY_CONFIG = struct(
    CORE + "SessionAffinityConfig",
    "Parameters of session affinity.",
    f(
        "clientIP",
        struct(
            CORE + "ClientIPConfig",
            "Parameters of ClientIP session affinity.",
            f("timeoutSeconds", "int32", "Seconds a session sticks."),
        ),
        "ClientIP affinity parameters.",
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
    ),
    f("selector", Map("string"), "Labels of the pods traffic goes to.", map_type="atomic"),
    f("clusterIP", "string", "The Service's virtual IP; None for a headless Service."),
    f("clusterIPs", Arr("string"), "Its virtual IPs, one per IP family.", list_type="atomic"),
    f(
        "type",
        "string",
        "ClusterIP, NodePort, LoadBalancer or ExternalName.",
        enum=("ClusterIP", "ExternalName", "LoadBalancer", "NodePort"),
    ),
    f("externalIPs", Arr("string"), "IPs outside the cluster that also reach the Service."),
    f("sessionAffinity", "string", "ClientIP or None.", enum=("ClientIP", "None")),
    f("loadBalancerIP", "string", "Deprecated: the requested load balancer IP."),
    f("loadBalancerSourceRanges", Arr("string"), "Client ranges a load balancer admits."),
    f("externalName", "string", "The DNS name an ExternalName Service aliases."),
    f("externalTrafficPolicy", "string", "Cluster or Local routing of external traffic."),
    f("healthCheckNodePort", "int32", "The health-check node port of a Local LoadBalancer."),
    f("publishNotReadyAddresses", "boolean", "DNS lists pods that are not ready."),
    f("sessionAffinityConfig", SESSION_AFFINITY_CONFIG, "Parameters of session affinity."),
    f("ipFamilies", Arr("string"), "IPv4 and/or IPv6, in clusterIPs order.", list_type="atomic"),
    f(
        "ipFamilyPolicy",
        "string",
        "SingleStack, PreferDualStack or RequireDualStack.",
        enum=("PreferDualStack", "RequireDualStack", "SingleStack"),
    ),
    f("allocateLoadBalancerNodePorts", "boolean", "Allocate node ports for a LoadBalancer."),
    f("loadBalancerClass", "string", "The load balancer implementation."),
    f("internalTrafficPolicy", "string", "Cluster or Local routing of in-cluster traffic."),
)
PORT_STATUS = struct(
    CORE + "PortStatus",
    "The state of one port of a load balancer.",
    f("port", "int32", "The port number.", required=True),
    f("protocol", "string", "TCP, UDP or SCTP.", required=True),
    f("error", "string", "Why the port failed, if it did."),
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
                f("ip", "string", "An IP address."),
                f("hostname", "string", "A DNS name."),
                f("ports", Arr(PORT_STATUS), "The state of its ports.", list_type="atomic"),
            )
        ),
        "The load balancer's ingress points.",
    ),
)
SERVICE_STATUS = struct(
    CORE + "ServiceStatus",
    "The observed state of a Service.",
    f("loadBalancer", LOAD_BALANCER_STATUS, "The load balancer, if any.", emit=True),
    f(
        "conditions",
        Arr(CONDITION),
        "Current observations of its state.",
        merge="type",
        list_type="map",
    ),
)
SERVICE = struct(
    CORE + "Service",
    "A named, stable address for a set of pods, and its ports.",
    *type_meta(),
    metadata_field(),
    f("spec", SERVICE_SPEC, "Desired state.", emit=True),
    f("status", SERVICE_STATUS, "Observed state.", emit=True),
)

ENDPOINT_ADDRESS = struct(
    CORE + "EndpointAddress",
    "One address of an Endpoints subset.",
    f("ip", "string", "The IP of the endpoint.", required=True),
    f("hostname", "string", "The hostname of the endpoint."),
    f("nodeName", "string", "The node hosting the endpoint."),
    f("targetRef", OBJECT_REFERENCE, "The object (usually a pod) behind the endpoint."),
)
ENDPOINT_PORT = struct(
    CORE + "EndpointPort",
    "One port of an Endpoints subset.",
    f("name", "string", "Name of the port, matching a Service port's name."),
    f("port", "int32", "The port number.", required=True),
    f("protocol", "string", "TCP, UDP or SCTP.", enum=("SCTP", "TCP", "UDP")),
    f("appProtocol", "string", "The application protocol of the port."),
)
ENDPOINT_SUBSET = struct(
    CORE + "EndpointSubset",
    "Addresses that share a set of ports.",
    f("addresses", Arr(ENDPOINT_ADDRESS), "Ready addresses.", list_type="atomic"),
    f("notReadyAddresses", Arr(ENDPOINT_ADDRESS), "Addresses not ready.", list_type="atomic"),
    f("ports", Arr(ENDPOINT_PORT), "The ports of the addresses.", list_type="atomic"),
)
ENDPOINTS = struct(
    CORE + "Endpoints",
    "The addresses and ports that implement a Service.",
    *type_meta(),
    metadata_field(),
    f("subsets", Arr(ENDPOINT_SUBSET), "The sets of addresses and ports.", list_type="atomic"),
)

ENDPOINT_CONDITIONS = struct(
    DISCOVERY + "EndpointConditions",
    "The state of one endpoint.",
    f("ready", "boolean", "The endpoint accepts traffic."),
    f("serving", "boolean", "The endpoint serves, whether terminating or not."),
    f("terminating", "boolean", "The endpoint is terminating."),
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
                f("name", "string", "The zone's name.", required=True),
            )
        ),
        "Zones the endpoint should serve.",
        list_type="atomic",
    ),
)
ENDPOINT = struct(
    DISCOVERY + "Endpoint",
    "One endpoint of an EndpointSlice.",
    f("addresses", Arr("string"), "Its addresses.", required=True, list_type="set"),
    f("conditions", ENDPOINT_CONDITIONS, "Its state.", emit=True),
    f("hostname", "string", "Its hostname."),
    f("targetRef", OBJECT_REFERENCE, "The object (usually a pod) behind it."),
    f("deprecatedTopology", Map("string"), "Deprecated topology labels."),
    f("nodeName", "string", "The node hosting it."),
    f("zone", "string", "The zone it is in."),
    f("hints", ENDPOINT_HINTS, "How it should be consumed."),
)
DISCOVERY_ENDPOINT_PORT = struct(
    DISCOVERY + "EndpointPort",
    "One port of an EndpointSlice.",
    f("name", "string", "Name of the port, matching a Service port's name."),
    f("protocol", "string", "TCP, UDP or SCTP."),
    f("port", "int32", "The port number."),
    f("appProtocol", "string", "The application protocol of the port."),
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
    ),
    f("endpoints", Arr(ENDPOINT), "The endpoints.", required=True, list_type="atomic"),
    f("ports", Arr(DISCOVERY_ENDPOINT_PORT), "The ports of every endpoint.", list_type="atomic"),
)
serve("", "v1", "Secret", SECRET)
serve("", "v1", "Service", SERVICE)
serve("", "v1", "Endpoints", ENDPOINTS)
serve("discovery.k8s.io", "v1", "EndpointSlice", ENDPOINT_SLICE)
