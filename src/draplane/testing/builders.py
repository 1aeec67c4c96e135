"""Chainable builders for test objects: `make_pod().name("p").claim_template("gpu", "t").obj()`.

Setters are named after the fields they set; `obj()` returns a fresh dict each call.
`from_pod(p)`, `from_claim(c)` start from an existing object to make a variant.
"""

from __future__ import annotations

from typing import Any, Self

from draplane.api import versions
from draplane.api.meta import Obj, deep_copy
from draplane.dra.claims import pod_resource_claim
from draplane.testing.basebuilder import _Builder as _Builder, _ReservedFor, _uid as _uid


class PodBuilder(_Builder):
    def node(self, node_name: str) -> Self:
        self._obj["spec"]["nodeName"] = node_name
        return self

    def phase(self, value: str) -> Self:
        self._obj.setdefault("status", {})["phase"] = value
        return self

    def priority(self, value: int) -> Self:
        self._obj["spec"]["priority"] = value
        return self

    def scheduler_name(self, value: str) -> Self:
        self._obj["spec"]["schedulerName"] = value
        return self

    def node_selector(self, selector: dict[str, str]) -> Self:
        self._obj["spec"]["nodeSelector"] = dict(selector)
        return self

    def requests(self, **resources: str) -> Self:
        container = self._obj["spec"]["containers"][0]
        container.setdefault("resources", {}).setdefault("requests", {}).update(resources)
        return self

    def _pod_claim(self, entry: Obj) -> Self:
        self._obj["spec"].setdefault("resourceClaims", []).append(entry)
        container = self._obj["spec"]["containers"][0]
        container.setdefault("resources", {}).setdefault("claims", []).append(
            {"name": entry["name"]}
        )
        return self

    def claim_template(
        self, pod_claim_name: str, template: str, *, mode: versions.Mode = versions.CLASSIC
    ) -> Self:
        """A pod claim generated from the ResourceClaimTemplate `template`, in `mode`'s shape:
        core/v1's since 1.31 for DRA with structured parameters (1.36), else under `source`
        (1.28)."""
        return self._pod_claim(
            pod_resource_claim(
                pod_claim_name,
                template_name=template,
                mode=mode,
            )
        )

    def claim_ref(
        self, pod_claim_name: str, claim: str, *, mode: versions.Mode = versions.CLASSIC
    ) -> Self:
        """A pod claim referencing the user-created ResourceClaim `claim` (`mode` as
        `claim_template`)."""
        return self._pod_claim(
            pod_resource_claim(
                pod_claim_name,
                claim_name=claim,
                mode=mode,
            )
        )

    def claim_no_source(self, pod_claim_name: str) -> Self:
        self._obj["spec"].setdefault("resourceClaims", []).append(
            {"name": pod_claim_name, "source": {}}
        )
        return self

    def claim_status(self, pod_claim_name: str, claim_name: str | None) -> Self:
        statuses = self._obj.setdefault("status", {}).setdefault("resourceClaimStatuses", [])
        statuses.append(
            {"name": pod_claim_name, "resourceClaimName": claim_name}
            if claim_name is not None
            else {"name": pod_claim_name}
        )
        return self

    def condition(self, type_: str, status: str, reason: str = "") -> Self:
        cond: Obj = {"type": type_, "status": status}
        if reason:
            cond["reason"] = reason
        self._obj.setdefault("status", {}).setdefault("conditions", []).append(cond)
        return self

    def restart_policy(self, value: str) -> Self:
        self._obj["spec"]["restartPolicy"] = value
        return self

    def container(self, name: str, image: str = "registry.k8s.io/pause:3.9", **fields: Any) -> Self:
        """Add a container (`env=[...]`, `envFrom=[...]`, `resources=...` as in the API)."""
        self._obj["spec"]["containers"].append({"name": name, "image": image, **fields})
        return self

    def container_fields(self, container: int = 0, **fields: Any) -> Self:
        """Set fields of an existing container (`image=""`, `imagePullPolicy="Never"`, ...)."""
        self._obj["spec"]["containers"][container].update(fields)
        return self

    def env(self, name: str, value: str, container: int = 0) -> Self:
        self._obj["spec"]["containers"][container].setdefault("env", []).append(
            {"name": name, "value": value}
        )
        return self

    def volume(self, name: str, **source: Any) -> Self:
        """Add a volume: `volume("s", secret={"secretName": "x"})`."""
        self._obj["spec"].setdefault("volumes", []).append({"name": name, **source})
        return self

    def init_container(
        self, name: str, image: str = "registry.k8s.io/pause:3.9", **fields: Any
    ) -> Self:
        """Add an init container (`restartPolicy="Always"` makes it a sidecar)."""
        self._obj["spec"].setdefault("initContainers", []).append(
            {"name": name, "image": image, **fields}
        )
        return self


class NodeBuilder(_Builder):
    def capacity(self, **resources: str) -> Self:
        status = self._obj.setdefault("status", {})
        status.setdefault("capacity", {}).update(resources)
        status.setdefault("allocatable", {}).update(resources)
        return self

    def unschedulable(self, value: bool = True) -> Self:
        self._obj.setdefault("spec", {})["unschedulable"] = value
        return self

    def taint(self, key: str, effect: str, value: str = "") -> Self:
        taint: Obj = {"key": key, "effect": effect}
        if value:
            taint["value"] = value
        self._obj.setdefault("spec", {}).setdefault("taints", []).append(taint)
        return self


class ClaimBuilder(_ReservedFor):
    def resource_class(self, value: str) -> Self:
        self._obj["spec"]["resourceClassName"] = value
        return self

    def allocation_mode(self, value: str) -> Self:
        self._obj["spec"]["allocationMode"] = value
        return self

    def parameters(self, name: str, kind: str = "ConfigMap", api_group: str = "") -> Self:
        ref: Obj = {"kind": kind, "name": name}
        if api_group:
            ref["apiGroup"] = api_group
        self._obj["spec"]["parametersRef"] = ref
        return self

    def allocation(
        self,
        *,
        driver: str = "driver.example.com",
        node: str | None = None,
        shareable: bool = False,
        data: str = "",
    ) -> Self:
        allocation: Obj = {"resourceHandles": [{"driverName": driver, "data": data}]}
        if shareable:
            allocation["shareable"] = True
        if node is not None:
            allocation["availableOnNodes"] = {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}
                        ]
                    }
                ]
            }
        status = self._obj.setdefault("status", {})
        status["allocation"] = allocation
        status["driverName"] = driver
        return self

    def deallocation_requested(self, value: bool = True) -> Self:
        self._obj.setdefault("status", {})["deallocationRequested"] = value
        return self


class TemplateBuilder(_Builder):
    def resource_class(self, value: str) -> Self:
        self._obj["spec"]["spec"]["resourceClassName"] = value
        return self

    def allocation_mode(self, value: str) -> Self:
        self._obj["spec"]["spec"]["allocationMode"] = value
        return self

    def claim_label(self, key: str, value: str) -> Self:
        self._obj["spec"].setdefault("metadata", {}).setdefault("labels", {})[key] = value
        return self

    def claim_annotation(self, key: str, value: str) -> Self:
        self._obj["spec"].setdefault("metadata", {}).setdefault("annotations", {})[key] = value
        return self


class ClassBuilder(_Builder):
    def driver(self, value: str) -> Self:
        self._obj["driverName"] = value
        return self

    def parameters(self, name: str, namespace: str = "default", kind: str = "ConfigMap") -> Self:
        self._obj["parametersRef"] = {"kind": kind, "name": name, "namespace": namespace}
        return self

    def suitable_nodes(self, *nodes: str) -> Self:
        self._obj["suitableNodes"] = {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": "kubernetes.io/hostname", "operator": "In", "values": list(nodes)}
                    ]
                }
            ]
        }
        return self


class SchedulingContextBuilder(_Builder):
    def selected_node(self, value: str) -> Self:
        self._obj.setdefault("spec", {})["selectedNode"] = value
        return self

    def potential_nodes(self, *nodes: str) -> Self:
        self._obj.setdefault("spec", {})["potentialNodes"] = list(nodes)
        return self

    def unsuitable_nodes(self, pod_claim_name: str, *nodes: str) -> Self:
        entries = self._obj.setdefault("status", {}).setdefault("resourceClaims", [])
        entries.append({"name": pod_claim_name, "unsuitableNodes": list(nodes)})
        return self


def make_pod(name: str = "my-pod", namespace: str = "default") -> PodBuilder:
    return PodBuilder(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": _uid(name)},
            "spec": {"containers": [{"name": "ctr", "image": "registry.k8s.io/pause:3.9"}]},
        }
    )


def from_pod(pod: Obj) -> PodBuilder:
    return PodBuilder(deep_copy(pod))


def make_node(name: str = "node-0") -> NodeBuilder:
    return NodeBuilder(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "uid": _uid(name),
                "labels": {"kubernetes.io/hostname": name},
            },
            "spec": {},
            "status": {
                "capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                "allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"},
            },
        }
    )


def make_claim(name: str = "my-claim", namespace: str = "default") -> ClaimBuilder:
    return ClaimBuilder(
        {
            "apiVersion": "resource.k8s.io/v1alpha2",
            "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": namespace, "uid": _uid(name)},
            "spec": {"resourceClassName": "example", "allocationMode": "WaitForFirstConsumer"},
        }
    )


def from_claim(claim: Obj) -> ClaimBuilder:
    return ClaimBuilder(deep_copy(claim))


def make_template(name: str = "my-template", namespace: str = "default") -> TemplateBuilder:
    return TemplateBuilder(
        {
            "apiVersion": "resource.k8s.io/v1alpha2",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": namespace, "uid": _uid(name)},
            "spec": {
                "spec": {"resourceClassName": "example", "allocationMode": "WaitForFirstConsumer"}
            },
        }
    )


def make_class(name: str = "example", driver: str = "driver.example.com") -> ClassBuilder:
    return ClassBuilder(
        {
            "apiVersion": "resource.k8s.io/v1alpha2",
            "kind": "ResourceClass",
            "metadata": {"name": name, "uid": _uid(name)},
            "driverName": driver,
        }
    )


def make_scheduling_context(pod: Obj) -> SchedulingContextBuilder:
    md = pod["metadata"]
    b = SchedulingContextBuilder(
        {
            "apiVersion": "resource.k8s.io/v1alpha2",
            "kind": "PodSchedulingContext",
            "metadata": {
                "name": md["name"],
                "namespace": md.get("namespace", "default"),
                "uid": _uid(md["name"] + "-psc"),
            },
            "spec": {},
        }
    )
    return b.owner("Pod", md["name"], md["uid"])


def from_scheduling_context(psc: Obj) -> SchedulingContextBuilder:
    return SchedulingContextBuilder(deep_copy(psc))


# The workload kinds' builders live in their own module; importable from here too.
from draplane.testing.workloadbuilders import (  # noqa: E402
    WorkloadBuilder as WorkloadBuilder,
    from_workload as from_workload,
    make_controller_revision as make_controller_revision,
    make_cron_job as make_cron_job,
    make_daemon_set as make_daemon_set,
    make_deployment as make_deployment,
    make_job as make_job,
    make_pod_disruption_budget as make_pod_disruption_budget,
    make_replica_set as make_replica_set,
    make_replication_controller as make_replication_controller,
    make_stateful_set as make_stateful_set,
)
