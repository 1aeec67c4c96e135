"""core/v1 ResourceQuota through the real registry in both Kubernetes versions: quota admission
of pods (counts, requests, limits, scopes, init containers and sidecars), object counts,
Services, PersistentVolumeClaims and DRA ResourceClaims (devices per class: exact counts, `All`,
`firstAvailable`; the implicit and the DeviceClass's extended resource), with upstream's 403
`exceeded quota` and `status unknown` messages; `status.used` charged on admission and
recomputed by the resource quota controller (writing as its service account) after deletions;
dry runs; the claim controller's claim refused past a device quota; validation (422 with
causes) of quotas and LimitRanges."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest

from draplane.api import kinds, meta, versions
from draplane.api.auth import CONTROLLER_MANAGER, UserInfo, controller_user
from draplane.api.errors import StatusError
from draplane.api.meta import Obj
from draplane.api.request import Options, Request
from draplane.client.informer import InformerFactory
from draplane.client.interface import Client
from draplane.controllers.context import ControllerContext
from draplane.controllers.resourceclaim import ResourceClaimController
from draplane.controllers.resourcequota import ResourceQuotaController
from draplane.testing.builders import make_claim, make_pod
from draplane.testing.cluster import Cluster, start_cluster
from draplane.testing.quotabuilders import make_limit_range, make_resource_quota
from draplane.testing.storagebuilders import make_persistent_volume_claim
from draplane.testing.structured import (
    make_device_class,
    make_structured_claim,
    make_structured_claim_template,
    make_subrequest,
)

GPU = "gpu.example.com"
TPU = "tpu.example.com"
GPU_DEVICES = f"{GPU}.deviceclass.resource.k8s.io/devices"
TPU_DEVICES = f"{TPU}.deviceclass.resource.k8s.io/devices"


@dataclass
class Plane:
    cluster: Cluster
    client: Client
    controller: ResourceQuotaController
    namespaces: list[str] = field(default_factory=list)

    async def namespace(self) -> str:
        name = f"ns-{len(self.namespaces)}"
        self.namespaces.append(name)
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        await self.client.create(kinds.NAMESPACES, body)
        return name

    async def quota(self, builder_obj: Obj) -> Obj:
        """Create the quota and wait for the controller's first status."""
        created = await self.client.create(kinds.RESOURCE_QUOTAS, builder_obj)
        return await self.wait_status(
            meta.namespace(created),
            meta.name(created),
            lambda q: (
                set((q.get("status") or {}).get("hard") or {}) == set(q["spec"].get("hard") or {})
            ),
        )

    async def wait_status(self, namespace: str, name: str, done) -> Obj:  # type: ignore[no-untyped-def]
        for _ in range(500):
            found = await self.client.get(kinds.RESOURCE_QUOTAS, name, namespace)
            if done(found):
                return found
            await asyncio.sleep(0.01)
        raise AssertionError(f"quota {namespace}/{name}: {found.get('status')}")

    async def used(self, namespace: str, name: str = "quota") -> dict[str, str]:
        found = await self.client.get(kinds.RESOURCE_QUOTAS, name, namespace)
        return dict((found.get("status") or {}).get("used") or {})


async def _plane(mode: versions.Mode) -> AsyncIterator[Plane]:
    cluster = await start_cluster(mode=mode)
    client = cluster.client()
    factory = InformerFactory(cluster.client(UserInfo(CONTROLLER_MANAGER)))
    # The controller writes as its service account: its bootstrap role must suffice.
    own = cluster.client(controller_user(ResourceQuotaController.NAME))
    controller = ResourceQuotaController(ControllerContext.of(own, factory), mode=mode)
    await factory.start()
    task = asyncio.create_task(controller.run())
    try:
        yield Plane(cluster, client, controller)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await factory.stop()
        await cluster.stop()


@pytest.fixture
async def structured() -> AsyncIterator[Plane]:
    async for plane in _plane(versions.STRUCTURED):
        yield plane


@pytest.fixture
async def classic() -> AsyncIterator[Plane]:
    async for plane in _plane(versions.CLASSIC):
        yield plane


async def _create(plane: Plane, obj: Obj) -> Obj:
    rt = kinds.for_kind(obj["apiVersion"], obj["kind"])
    assert rt is not None
    return await plane.client.create(rt, obj, meta.namespace(obj))


# --- pods ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AdmissionCase:
    hard: dict[str, str]
    admitted: list[Obj]
    """Created in order, each admitted."""
    refused: Obj | None
    """Then this one, refused with `message` (None: nothing refused)."""
    message: str = ""
    used: dict[str, str] = field(default_factory=dict)
    """status.used after the admitted objects."""
    scopes: tuple[str, ...] = ()


def _pod(name: str, *, cpu: str = "", memory_limit: str = "", deadline: int | None = None) -> Obj:
    pod = make_pod(name, "")
    if cpu:
        pod.requests(cpu=cpu)
    if memory_limit:
        pod.set(
            "spec.containers",
            [
                {
                    "name": "ctr",
                    "image": "registry.k8s.io/pause:3.9",
                    "resources": {"limits": {"memory": memory_limit}},
                }
            ],
        )
    if deadline is not None:
        pod.set("spec.activeDeadlineSeconds", deadline)
    return pod.obj()


def _container(name: str, *, cpu: str, always: bool = False) -> Obj:
    ctr: Obj = {
        "name": name,
        "image": "registry.k8s.io/pause:3.9",
        "resources": {"requests": {"cpu": cpu}, "limits": {"cpu": cpu}},
    }
    if always:
        ctr["restartPolicy"] = "Always"
    return ctr


def _service(name: str, type_: str, ports: int) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {"type": type_, "ports": [{"name": f"p{i}", "port": 80 + i} for i in range(ports)]},
    }


POD_CASES = [
    pytest.param(
        AdmissionCase(
            {"count/pods": "1"},
            [_pod("a")],
            _pod("b"),
            "exceeded quota: quota, requested: count/pods=1, used: count/pods=1, "
            "limited: count/pods=1",
            {"count/pods": "1"},
        ),
        id="count-pods",
    ),
    pytest.param(
        AdmissionCase(
            {"requests.cpu": "1", "pods": "5"},
            [_pod("a", cpu="500m"), _pod("b", cpu="200m")],
            _pod("c", cpu="600m"),
            "exceeded quota: quota, requested: requests.cpu=600m, used: requests.cpu=700m, "
            "limited: requests.cpu=1",
            {"requests.cpu": "700m", "pods": "2"},
        ),
        id="requests-cpu",
    ),
    pytest.param(
        AdmissionCase(
            {"limits.memory": "1Gi"},
            [_pod("a", memory_limit="512Mi"), _pod("b", memory_limit="512Mi")],
            _pod("c", memory_limit="1Mi"),
            "exceeded quota: quota, requested: limits.memory=1Mi, used: limits.memory=1Gi, "
            "limited: limits.memory=1Gi",
            {"limits.memory": "1Gi"},
        ),
        id="limits-memory",
    ),
    pytest.param(
        AdmissionCase(
            {"pods": "1"},
            [_pod("a", cpu="1"), _pod("b")],
            _pod("c"),
            "exceeded quota: quota, requested: pods=1, used: pods=1, limited: pods=1",
            {"pods": "1"},
            scopes=("BestEffort",),
        ),
        id="best-effort-scope",
    ),
    pytest.param(
        AdmissionCase(
            {"pods": "1"},
            [_pod("a"), _pod("b", deadline=30)],
            _pod("c", deadline=60),
            "exceeded quota: quota, requested: pods=1, used: pods=1, limited: pods=1",
            {"pods": "1"},
            scopes=("Terminating",),
        ),
        id="terminating-scope",
    ),
    pytest.param(
        AdmissionCase(
            {"requests.cpu": "2", "limits.cpu": "3"},
            [
                make_pod("a", "")
                .set(
                    "spec.initContainers",
                    [
                        _container("init", cpu="2"),
                        _container("sidecar", cpu="500m", always=True),
                    ],
                )
                .set("spec.containers", [_container("ctr", cpu="1")])
                .obj()
            ],
            _pod("b", cpu="1"),
            "exceeded quota: quota, requested: requests.cpu=1, used: requests.cpu=2, "
            "limited: requests.cpu=2",
            {"requests.cpu": "2", "limits.cpu": "2"},
        ),
        id="init-containers-and-sidecars",
    ),
    pytest.param(
        AdmissionCase(
            {"services.nodeports": "3", "services.loadbalancers": "1", "services": "5"},
            [_service("a", "NodePort", 2), _service("b", "ClusterIP", 4)],
            _service("c", "LoadBalancer", 2),
            "exceeded quota: quota, requested: services.nodeports=2, "
            "used: services.nodeports=2, limited: services.nodeports=3",
            {"services.nodeports": "2", "services": "2"},
        ),
        id="services",
    ),
    pytest.param(
        AdmissionCase(
            {
                "requests.storage": "10Gi",
                "fast.storageclass.storage.k8s.io/requests.storage": "1Gi",
            },
            [make_persistent_volume_claim("a", "").set("spec.storageClassName", "fast").obj()],
            make_persistent_volume_claim("b", "").set("spec.storageClassName", "fast").obj(),
            "exceeded quota: quota, requested: fast.storageclass.storage.k8s.io/"
            "requests.storage=1Gi, used: fast.storageclass.storage.k8s.io/requests.storage=1Gi, "
            "limited: fast.storageclass.storage.k8s.io/requests.storage=1Gi",
            {
                "requests.storage": "1Gi",
                "fast.storageclass.storage.k8s.io/requests.storage": "1Gi",
            },
        ),
        id="persistent-volume-claims",
    ),
    pytest.param(
        AdmissionCase(
            {"count/configmaps": "1", "configmaps": "1"},
            [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}],
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}},
            "exceeded quota: quota, requested: configmaps=1,count/configmaps=1, "
            "used: configmaps=1,count/configmaps=1, limited: configmaps=1,count/configmaps=1",
            {"count/configmaps": "1", "configmaps": "1"},
        ),
        id="object-counts",
    ),
]


async def _run(plane: Plane, case: AdmissionCase, rt: kinds.ResourceType) -> None:
    ns = await plane.namespace()
    quota = make_resource_quota("quota", ns)
    for name, value in case.hard.items():
        quota.hard(name, value)
    if case.scopes:
        quota.scopes(*case.scopes)
    await plane.quota(quota.obj())
    for obj in case.admitted:
        obj["metadata"]["namespace"] = ns
        await _create(plane, obj)
    if case.refused is not None:
        case.refused["metadata"]["namespace"] = ns
        with pytest.raises(StatusError) as err:
            await _create(plane, case.refused)
        name = meta.name(case.refused)
        assert err.value.code == 403
        assert err.value.reason == "Forbidden"
        assert err.value.message == f'{rt.group_resource} "{name}" is forbidden: {case.message}'
    assert await plane.used(ns) == {**{n: "0" for n in case.hard}, **case.used}


@pytest.mark.parametrize("case", POD_CASES)
async def test_pod_and_object_count_admission(structured: Plane, case: AdmissionCase) -> None:
    rt = kinds.for_kind("v1", case.admitted[0]["kind"])
    assert rt is not None
    await _run(structured, case, rt)


# --- DRA claims (1.36) --------------------------------------------------------------------------


CLAIM_CASES = [
    pytest.param(
        AdmissionCase(
            {GPU_DEVICES: "4"},
            [make_structured_claim("a", "").request("r", GPU, count=3).obj()],
            make_structured_claim("b", "").request("r", GPU, count=2).obj(),
            f"exceeded quota: quota, requested: {GPU_DEVICES}=2, used: {GPU_DEVICES}=3, "
            f"limited: {GPU_DEVICES}=4",
            {GPU_DEVICES: "3"},
        ),
        id="exact-count",
    ),
    pytest.param(
        AdmissionCase(
            {GPU_DEVICES: "40", TPU_DEVICES: "1"},
            [
                make_structured_claim("a", "")
                .request("r0", GPU, count=2)
                .request("r1", GPU, mode="All")
                .request("r2", TPU)
                .obj()
            ],
            make_structured_claim("b", "").request("r", TPU).obj(),
            f"exceeded quota: quota, requested: {TPU_DEVICES}=1, used: {TPU_DEVICES}=1, "
            f"limited: {TPU_DEVICES}=1",
            {GPU_DEVICES: "34", TPU_DEVICES: "1"},
        ),
        id="count-and-all-several-classes",
    ),
    pytest.param(
        AdmissionCase(
            {GPU_DEVICES: "3", TPU_DEVICES: "32"},
            [
                make_structured_claim("a", "")
                .first_available(
                    "r",
                    make_subrequest("big", GPU, count=2),
                    make_subrequest("small", GPU, count=1),
                    make_subrequest("other", TPU, mode="All"),
                )
                .obj()
            ],
            make_structured_claim("b", "")
            .first_available("r", make_subrequest("one", GPU), make_subrequest("two", GPU, count=2))
            .obj(),
            f"exceeded quota: quota, requested: {GPU_DEVICES}=2, used: {GPU_DEVICES}=2, "
            f"limited: {GPU_DEVICES}=3",
            {GPU_DEVICES: "2", TPU_DEVICES: "32"},
        ),
        id="first-available-largest-per-class",
    ),
    pytest.param(
        AdmissionCase(
            {"count/resourceclaims.resource.k8s.io": "1", GPU_DEVICES: "10"},
            [make_structured_claim("a", "").request("r", GPU).obj()],
            make_structured_claim("b", "").request("r", TPU).obj(),
            "exceeded quota: quota, requested: count/resourceclaims.resource.k8s.io=1, "
            "used: count/resourceclaims.resource.k8s.io=1, "
            "limited: count/resourceclaims.resource.k8s.io=1",
            {"count/resourceclaims.resource.k8s.io": "1", GPU_DEVICES: "1"},
        ),
        id="claim-count",
    ),
    pytest.param(
        AdmissionCase(
            {"requests.deviceclass.resource.kubernetes.io/" + GPU: "2"},
            [make_structured_claim("a", "").request("r", GPU, count=2).obj()],
            make_structured_claim("b", "").request("r", GPU).obj(),
            "exceeded quota: quota, requested: requests.deviceclass.resource.kubernetes.io/"
            f"{GPU}=1, used: requests.deviceclass.resource.kubernetes.io/{GPU}=2, "
            f"limited: requests.deviceclass.resource.kubernetes.io/{GPU}=2",
            {"requests.deviceclass.resource.kubernetes.io/" + GPU: "2"},
        ),
        id="implicit-extended-resource",
    ),
]


@pytest.mark.parametrize("case", CLAIM_CASES)
async def test_claim_admission(structured: Plane, case: AdmissionCase) -> None:
    await _run(structured, case, kinds.RESOURCE_CLAIMS_V1)


async def test_classic_claims_count_per_resource_class(classic: Plane) -> None:
    per_class = "example.resourceclass.resource.k8s.io/resourceclaims"
    case = AdmissionCase(
        {per_class: "1", "count/resourceclaims.resource.k8s.io": "5"},
        [make_claim("a", "").obj()],
        make_claim("b", "").obj(),
        f"exceeded quota: quota, requested: {per_class}=1, used: {per_class}=1, "
        f"limited: {per_class}=1",
        {per_class: "1", "count/resourceclaims.resource.k8s.io": "1"},
    )
    await _run(classic, case, kinds.RESOURCE_CLAIMS)


# --- status after create and delete ---------------------------------------------------------------


@pytest.mark.parametrize("mode", [versions.STRUCTURED, versions.CLASSIC], ids=str)
async def test_used_is_charged_on_create_and_recomputed_after_delete(mode: versions.Mode) -> None:
    async for plane in _plane(mode):
        await _charged_then_recomputed(plane)


async def _charged_then_recomputed(plane: Plane) -> None:
    ns = await plane.namespace()
    await plane.quota(
        make_resource_quota("quota", ns).hard("pods", "10").hard("requests.cpu", "4").obj()
    )
    await _create(plane, make_pod("a", ns).requests(cpu="1").obj())
    await _create(plane, make_pod("b", ns).requests(cpu="1500m").obj())
    assert await plane.used(ns) == {"pods": "2", "requests.cpu": "2500m"}
    await plane.client.delete(kinds.PODS, "a", ns)
    recomputed = await plane.wait_status(ns, "quota", lambda q: q["status"]["used"]["pods"] == "1")
    assert recomputed["status"] == {
        "hard": {"pods": "10", "requests.cpu": "4"},
        "used": {"pods": "1", "requests.cpu": "1500m"},
    }


async def test_dry_run_is_checked_not_charged(structured: Plane) -> None:
    ns = await structured.namespace()
    await structured.quota(make_resource_quota("quota", ns).hard("count/pods", "1").obj())
    request = Request(
        "create", kinds.PODS, ns, body=make_pod("a", ns).obj(), options=Options(dry_run=True)
    )
    created = await structured.client.transport.send(request)
    assert isinstance(created, dict)
    assert meta.name(created) == "a"
    assert await structured.used(ns) == {"count/pods": "0"}


# --- validation -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Invalid:
    quota: Obj
    causes: list[tuple[str, str]]
    """(field, message) of each cause."""


INVALID = [
    pytest.param(
        Invalid(
            make_resource_quota("q").hard("foo", "1").obj(),
            [("spec.hard[foo]", "must be a standard resource type or fully qualified")],
        ),
        id="unknown-bare-name",
    ),
    pytest.param(
        Invalid(
            make_resource_quota("q").hard("storage", "1Gi").obj(),
            [("spec.hard[storage]", "must be a standard resource for quota")],
        ),
        id="not-a-quota-resource",
    ),
    pytest.param(
        Invalid(
            make_resource_quota("q").hard("pods", "-1").hard("cpu", "abc").obj(),
            [
                ("spec.hard[pods]", "must be greater than or equal to 0"),
                (
                    "spec.hard[cpu]",
                    "quantities must match the regular expression "
                    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
                ),
            ],
        ),
        id="bad-quantities",
    ),
    pytest.param(
        Invalid(
            make_resource_quota("q").hard(GPU_DEVICES, "1500m").hard("count/pods", "0.5").obj(),
            [
                (f"spec.hard[{GPU_DEVICES}]", "must be an integer"),
                ("spec.hard[count/pods]", "must be an integer"),
            ],
        ),
        id="counts-are-integers",
    ),
    pytest.param(
        Invalid(
            make_resource_quota("q").hard("requests.cpu", "1").scopes("BestEffort").obj(),
            [("spec.scopes", "unsupported scope applied to resource")],
        ),
        id="best-effort-limits-only-pods",
    ),
    pytest.param(
        Invalid(
            make_resource_quota("q")
            .hard("pods", "1")
            .scopes("Terminating", "NotTerminating")
            .obj(),
            [("spec.scopes", "conflicting scopes")],
        ),
        id="conflicting-scopes",
    ),
    pytest.param(
        Invalid(
            make_resource_quota("q").hard("pods", "1").scopes("Fast").obj(),
            [("spec.scopes", "unsupported scope")],
        ),
        id="unknown-scope",
    ),
    pytest.param(
        Invalid(
            make_resource_quota("q")
            .hard("pods", "1")
            .scope("PriorityClass", "In")
            .scope("BestEffort", "In", "x")
            .obj(),
            [
                (
                    "spec.scopeSelector.matchExpressions.values",
                    "must be at least one value when `operator` is 'In' or 'NotIn' for scope "
                    "selector",
                ),
                (
                    "spec.scopeSelector.matchExpressions.operator",
                    "must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, "
                    "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "
                    "ResourceQuotaScopeNotBestEffort or "
                    "ResourceQuotaScopeCrossNamespacePodAffinity",
                ),
            ],
        ),
        id="scope-selector-operators",
    ),
]


@pytest.mark.parametrize("case", INVALID)
async def test_invalid_quotas_are_422(structured: Plane, case: Invalid) -> None:
    with pytest.raises(StatusError) as err:
        await structured.client.create(kinds.RESOURCE_QUOTAS, case.quota, "default")

    assert err.value.code == 422
    assert err.value.reason == "Invalid"
    causes = [(c["field"], c["message"]) for c in err.value.details["causes"]]
    assert [f for f, _ in causes] == [f for f, _ in case.causes]
    for (_, message), (_, wanted) in zip(causes, case.causes, strict=True):
        assert message.endswith(": " + wanted), message


async def test_scopes_are_immutable_and_status_is_validated(structured: Plane) -> None:
    quota = make_resource_quota("q").hard("pods", "1").scopes("NotBestEffort").obj()
    created = await structured.client.create(kinds.RESOURCE_QUOTAS, quota, "default")
    changed = meta.deep_copy(created)
    changed["spec"]["scopes"] = ["NotTerminating"]
    with pytest.raises(StatusError) as err:
        await structured.client.update(kinds.RESOURCE_QUOTAS, changed)
    assert err.value.code == 422
    assert err.value.details["causes"][0]["field"] == "spec.scopes"
    assert err.value.details["causes"][0]["message"].endswith("field is immutable")

    bad_status = await structured.client.get(kinds.RESOURCE_QUOTAS, "q", "default")
    bad_status["status"] = {"hard": {"pods": "1"}, "used": {"pods": "-2"}}
    with pytest.raises(StatusError) as err:
        await structured.client.update(kinds.RESOURCE_QUOTAS, bad_status, subresource="status")
    assert err.value.code == 422
    assert err.value.details["causes"][0]["field"] == "status.used[pods]"


async def test_a_status_without_the_use_of_a_limited_resource_refuses(
    structured: Plane,
) -> None:
    ns = await structured.namespace()
    structured.controller.queue.shut_down()  # this quota's status is written by hand
    created = await structured.client.create(
        kinds.RESOURCE_QUOTAS, make_resource_quota("quota", ns).hard("pods", "5").obj()
    )
    created["status"] = {"hard": {"pods": "5", "count/pods": "5"}, "used": {"pods": "0"}}
    await structured.client.update(kinds.RESOURCE_QUOTAS, created, subresource="status")

    with pytest.raises(StatusError) as err:
        await _create(structured, make_pod("a", ns).obj())

    assert err.value.code == 403
    assert err.value.message == (
        'pods "a" is forbidden: status unknown for quota: quota, resources: count/pods'
    )


async def test_limit_ranges_are_validated(structured: Plane) -> None:
    bad = make_limit_range("l").limit(
        "Container", min={"cpu": "2"}, max={"cpu": "1"}, maxLimitRequestRatio={"cpu": "500m"}
    )
    with pytest.raises(StatusError) as err:
        await structured.client.create(kinds.LIMIT_RANGES, bad.obj(), "default")
    assert err.value.code == 422
    assert [c["field"] for c in err.value.details["causes"]] == [
        "spec.limits[0].min[cpu]",
        "spec.limits[0].maxLimitRequestRatio[cpu]",
    ]
    good = make_limit_range("l").limit("Pod", max={"memory": "1Gi"})
    stored = await structured.client.create(kinds.LIMIT_RANGES, good.obj(), "default")
    assert stored["spec"]["limits"] == [{"type": "Pod", "max": {"memory": "1Gi"}}]


async def test_a_quota_counts_quotas(structured: Plane) -> None:
    ns = await structured.namespace()
    await structured.quota(make_resource_quota("quota", ns).hard("resourcequotas", "1").obj())

    with pytest.raises(StatusError) as err:
        await structured.client.create(
            kinds.RESOURCE_QUOTAS, make_resource_quota("second", ns).hard("pods", "1").obj()
        )

    assert err.value.message == (
        'resourcequotas "second" is forbidden: exceeded quota: quota, requested: '
        "resourcequotas=1, used: resourcequotas=1, limited: resourcequotas=1"
    )


async def test_the_claim_controller_cannot_create_a_claim_past_the_quota(
    structured: Plane,
) -> None:
    """A driver's quota of devices: the second pod's claim from the template is refused and
    the claim controller reports it on the pod."""
    ns = await structured.namespace()
    await structured.quota(make_resource_quota("quota", ns).hard(GPU_DEVICES, "1").obj())
    template = make_structured_claim_template(
        "gpu", ns, make_structured_claim().request("gpu", GPU)
    ).obj()
    await _create(structured, template)
    factory = InformerFactory(structured.client)
    claims = ResourceClaimController(
        ControllerContext.of(structured.client, factory), mode=versions.STRUCTURED
    )
    await factory.start()
    task = asyncio.create_task(claims.run())
    try:
        for name in ("first", "second"):
            pod = make_pod(name, ns).claim_template("gpu", "gpu", mode=versions.STRUCTURED)
            await _create(structured, pod.obj())
            for _ in range(500):
                events = (await structured.client.list(kinds.EVENTS, ns))["items"]
                listed = (await structured.client.list(kinds.RESOURCE_CLAIMS_V1, ns))["items"]
                if (name == "first" and listed) or (name == "second" and events):
                    break
                await asyncio.sleep(0.01)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await factory.stop()

    owners = [c["metadata"]["ownerReferences"][0]["name"] for c in listed]
    assert owners == ["first"]
    assert await structured.used(ns) == {GPU_DEVICES: "1"}
    refusals = [e for e in events if e["reason"] == "FailedResourceClaimCreation"]
    assert refusals and refusals[0]["involvedObject"]["name"] == "second"
    assert "exceeded quota: quota, requested: " + GPU_DEVICES + "=1" in refusals[0]["message"]


async def test_claims_and_pods_share_a_device_class_extended_resource(structured: Plane) -> None:
    """DRAExtendedResource: a claim of a class that serves `example.com/gpu` charges
    `requests.example.com/gpu`, as a pod asking for the extended resource does."""
    ns = await structured.namespace()
    gpu_class = make_device_class(GPU).set("spec.extendedResourceName", "example.com/gpu").obj()
    await structured.client.create(kinds.DEVICE_CLASSES, gpu_class)
    await structured.quota(
        make_resource_quota("quota", ns).hard("requests.example.com/gpu", "2").obj()
    )
    await _create(structured, make_structured_claim("a", ns).request("r", GPU, count=2).obj())
    pod = make_pod("p", ns).obj()
    pod["spec"]["containers"][0]["resources"] = {
        "requests": {"example.com/gpu": "1"},
        "limits": {"example.com/gpu": "1"},
    }

    with pytest.raises(StatusError) as err:
        await _create(structured, pod)

    assert err.value.message == (
        'pods "p" is forbidden: exceeded quota: quota, requested: requests.example.com/gpu=1, '
        "used: requests.example.com/gpu=2, limited: requests.example.com/gpu=2"
    )
    await structured.client.delete(kinds.RESOURCE_CLAIMS_V1, "a", ns)
    await structured.wait_status(
        ns, "quota", lambda q: q["status"]["used"] == {"requests.example.com/gpu": "0"}
    )
    await _create(structured, pod)
    assert await structured.used(ns) == {"requests.example.com/gpu": "1"}


async def test_concurrent_creates_are_charged_one_at_a_time(structured: Plane) -> None:
    ns = await structured.namespace()
    await structured.quota(make_resource_quota("quota", ns).hard("count/pods", "3").obj())

    results = await asyncio.gather(
        *(_create(structured, make_pod(f"p{i}", ns).obj()) for i in range(6)),
        return_exceptions=True,
    )

    refused = [r for r in results if isinstance(r, StatusError)]
    assert len(refused) == 3
    assert {r.code for r in refused} == {403}
    assert await structured.used(ns) == {"count/pods": "3"}
    assert len((await structured.client.list(kinds.PODS, ns))["items"]) == 3
