"""The volume kinds (core/v1 PersistentVolume, PersistentVolumeClaim; storage.k8s.io/v1
StorageClass, CSIDriver, CSINode, CSIStorageCapacity, VolumeAttachment), core/v1
ReplicationController and policy/v1 PodDisruptionBudget over HTTPS: create, get, list, update,
`status` and delete of each; upstream's defaults and validation (422 with field causes);
ReplicationController `scale`; and the list and watch calls of kube-scheduler 1.34's informers,
answered 200 to system:kube-scheduler in both Kubernetes versions."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson
import pytest
import pytest_asyncio

from draplane.api import auth, kinds, versions
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.schema import Schemas, schemas_for
from draplane.apiserver import protobuf, protobuf_codec, protobuf_serving
from draplane.testing.builders import make_pod_disruption_budget, make_replication_controller
from draplane.testing.httpserver import HttpServer, start_http_server
from draplane.testing.storagebuilders import (
    make_csi_driver,
    make_csi_node,
    make_csi_storage_capacity,
    make_persistent_volume,
    make_persistent_volume_claim,
    make_storage_class,
    make_volume_attachment,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[HttpServer]:
    srv = await start_http_server(tmp_path_factory.mktemp("storage"), mode=versions.STRUCTURED)
    yield srv
    await srv.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def http(server: HttpServer) -> AsyncIterator[aiohttp.ClientSession]:
    async with server.session() as session:
        yield session


def _path(rt: ResourceType, name: str = "", subresource: str = "") -> str:
    base = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
    ns = "/namespaces/default" if rt.namespaced else ""
    tail = f"/{name}" if name else ""
    sub = f"/{subresource}" if subresource else ""
    return f"{base}{ns}/{rt.resource}{tail}{sub}"


async def _call(
    http: aiohttp.ClientSession, method: str, path: str, body: Any = None
) -> tuple[int, Any]:
    data = orjson.dumps(body) if body is not None else None
    async with http.request(
        method, path, data=data, headers={"Content-Type": "application/json"}
    ) as resp:
        return resp.status, orjson.loads(await resp.read())


def _at(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def _put(obj: Obj, path: str, value: Any) -> Obj:
    parts = path.split(".")
    target = obj
    for part in parts[:-1]:
        target = target.setdefault(part, {})
    target[parts[-1]] = value
    return obj


def _causes(body: Any) -> list[tuple[str, str]]:
    return [(c["field"], c["reason"]) for c in body["details"]["causes"]]


# --- create, get, list, update, status, delete ---------------------------------------------------


@dataclass(frozen=True)
class Lifecycle:
    rt: ResourceType
    obj: Obj
    update: tuple[str, Any]
    """A field the main resource may change, and its new value."""
    status: dict[str, Any] = field(default_factory=dict)
    """A status the `status` subresource writes (empty: the kind has none)."""


LIFECYCLES = [
    pytest.param(
        Lifecycle(
            kinds.PERSISTENT_VOLUMES,
            make_persistent_volume("pv-life").obj(),
            ("spec.capacity", {"storage": "2Gi"}),
            {"phase": "Available"},
        ),
        id="persistentvolume",
    ),
    pytest.param(
        Lifecycle(
            kinds.PERSISTENT_VOLUME_CLAIMS,
            make_persistent_volume_claim("pvc-life").obj(),
            ("metadata.labels", {"tier": "db"}),
            {"phase": "Bound", "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]},
        ),
        id="persistentvolumeclaim",
    ),
    pytest.param(
        Lifecycle(
            kinds.REPLICATION_CONTROLLERS,
            make_replication_controller("rc-life").obj(),
            ("spec.replicas", 3),
            {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1},
        ),
        id="replicationcontroller",
    ),
    pytest.param(
        Lifecycle(
            kinds.STORAGE_CLASSES,
            make_storage_class("sc-life").obj(),
            ("allowVolumeExpansion", True),
        ),
        id="storageclass",
    ),
    pytest.param(
        Lifecycle(
            kinds.CSI_DRIVERS,
            make_csi_driver("life.csi.example.com").obj(),
            ("spec.podInfoOnMount", True),
        ),
        id="csidriver",
    ),
    pytest.param(
        Lifecycle(
            kinds.CSI_NODES,
            make_csi_node("node-life").obj(),
            ("metadata.labels", {"zone": "a"}),
        ),
        id="csinode",
    ),
    pytest.param(
        Lifecycle(
            kinds.CSI_STORAGE_CAPACITIES,
            make_csi_storage_capacity("cap-life").obj(),
            ("capacity", "20Gi"),
        ),
        id="csistoragecapacity",
    ),
    pytest.param(
        Lifecycle(
            kinds.VOLUME_ATTACHMENTS,
            make_volume_attachment("va-life").obj(),
            ("metadata.annotations", {"note": "x"}),
            {"attached": True, "attachmentMetadata": {"device": "/dev/sdb"}},
        ),
        id="volumeattachment",
    ),
    pytest.param(
        Lifecycle(
            kinds.POD_DISRUPTION_BUDGETS,
            make_pod_disruption_budget("pdb-life").obj(),
            ("spec.minAvailable", "50%"),
            {"disruptionsAllowed": 1, "currentHealthy": 2, "desiredHealthy": 1, "expectedPods": 2},
        ),
        id="poddisruptionbudget",
    ),
]


@pytest.mark.parametrize("case", LIFECYCLES)
async def test_lifecycle(http: aiohttp.ClientSession, case: Lifecycle) -> None:
    rt, name = case.rt, case.obj["metadata"]["name"]
    created_code, created = await _call(http, "POST", _path(rt), case.obj)
    get_code, got = await _call(http, "GET", _path(rt, name))
    _, listed = await _call(http, "GET", _path(rt))
    field_path, value = case.update
    updated_code, updated = await _call(http, "PUT", _path(rt, name), _put(got, field_path, value))
    if case.status:
        status_code, with_status = await _call(
            http, "PUT", _path(rt, name, "status"), {**updated, "status": case.status}
        )
        # The main resource does not write the status; the status subresource not the spec.
        assert status_code == 200, with_status
        assert {k: with_status["status"].get(k) for k in case.status} == case.status
        assert _at(with_status, field_path) == value
    delete_code, _ = await _call(http, "DELETE", _path(rt, name))
    gone_code, _ = await _call(http, "GET", _path(rt, name))

    assert created_code == 201, created
    assert (created["kind"], created["apiVersion"]) == (rt.kind, rt.api_version)
    assert get_code == 200 and got["metadata"]["uid"] == created["metadata"]["uid"]
    assert listed["kind"] == rt.list_kind
    assert name in [item["metadata"]["name"] for item in listed["items"]]
    assert updated_code == 200, updated
    assert _at(updated, field_path) == value
    assert (delete_code, gone_code) == (200, 404)


async def test_main_resource_update_keeps_the_status(http: aiohttp.ClientSession) -> None:
    rt = kinds.PERSISTENT_VOLUME_CLAIMS
    _, created = await _call(http, "POST", _path(rt), make_persistent_volume_claim("keep").obj())
    _, updated = await _call(
        http, "PUT", _path(rt, "keep"), {**created, "status": {"phase": "Bound"}}
    )

    assert updated["status"] == {"phase": "Pending"}


# --- defaults ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Defaults:
    rt: ResourceType
    obj: Obj
    want: dict[str, Any]
    """Dotted paths of the created object -> expected values."""


DEFAULTS = [
    pytest.param(
        Defaults(
            kinds.STORAGE_CLASSES,
            make_storage_class("sc-defaults").obj(),
            {"reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"},
        ),
        id="storageclass",
    ),
    pytest.param(
        Defaults(
            kinds.CSI_DRIVERS,
            make_csi_driver("defaults.csi.example.com").obj(),
            {
                "spec.attachRequired": True,
                "spec.podInfoOnMount": False,
                "spec.storageCapacity": False,
                "spec.fsGroupPolicy": "ReadWriteOnceWithFSType",
                "spec.volumeLifecycleModes": ["Persistent"],
                "spec.requiresRepublish": False,
                "spec.seLinuxMount": False,
            },
        ),
        id="csidriver",
    ),
    pytest.param(
        Defaults(
            kinds.PERSISTENT_VOLUMES,
            make_persistent_volume("pv-defaults").obj(),
            {
                "spec.persistentVolumeReclaimPolicy": "Retain",
                "spec.volumeMode": "Filesystem",
                "status.phase": "Pending",
            },
        ),
        id="persistentvolume",
    ),
    pytest.param(
        Defaults(
            kinds.PERSISTENT_VOLUME_CLAIMS,
            make_persistent_volume_claim("pvc-defaults").obj(),
            {"spec.volumeMode": "Filesystem", "status.phase": "Pending"},
        ),
        id="persistentvolumeclaim",
    ),
    pytest.param(
        Defaults(
            kinds.REPLICATION_CONTROLLERS,
            make_replication_controller("rc-defaults").selector(None).obj(),
            {
                "spec.replicas": 1,
                "spec.selector": {"app": "rc-defaults"},
                "metadata.labels": {"app": "rc-defaults"},
                "spec.template.spec.restartPolicy": "Always",
                "status.replicas": 0,
            },
        ),
        id="replicationcontroller",
    ),
    pytest.param(
        Defaults(
            kinds.VOLUME_ATTACHMENTS,
            {**make_volume_attachment("va-defaults").obj(), "status": {"attached": True}},
            {"status": {"attached": False}},
        ),
        id="volumeattachment",
    ),
    pytest.param(
        Defaults(
            kinds.POD_DISRUPTION_BUDGETS,
            make_pod_disruption_budget("pdb-defaults").obj(),
            {
                "status.disruptionsAllowed": 0,
                "status.currentHealthy": 0,
                "status.desiredHealthy": 0,
                "status.expectedPods": 0,
            },
        ),
        id="poddisruptionbudget",
    ),
]


@pytest.mark.parametrize("case", DEFAULTS)
async def test_defaults(http: aiohttp.ClientSession, case: Defaults) -> None:
    code, created = await _call(http, "POST", _path(case.rt), case.obj)

    assert code == 201, created
    assert {path: _at(created, path) for path in case.want} == case.want


# --- validation ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Invalid:
    rt: ResourceType
    obj: Obj
    want: list[tuple[str, str]]


def _edit(obj: Obj, **paths: Any) -> Obj:
    for path, value in paths.items():
        _put(obj, path.replace("__", "."), value)
    return obj


def _without(obj: Obj, path: str) -> Obj:
    *parents, last = path.split(".")
    target = obj
    for part in parents:
        target = target[part]
    del target[last]
    return obj


INVALID = [
    pytest.param(
        Invalid(
            kinds.STORAGE_CLASSES,
            _without(make_storage_class("sc-bad").obj(), "provisioner"),
            [("provisioner", "FieldValueRequired")],
        ),
        id="storageclass-no-provisioner",
    ),
    pytest.param(
        Invalid(
            kinds.STORAGE_CLASSES,
            make_storage_class("sc-bad")
            .reclaim_policy("Recycle")
            .volume_binding_mode("Later")
            .obj(),
            [
                ("reclaimPolicy", "FieldValueNotSupported"),
                ("volumeBindingMode", "FieldValueNotSupported"),
            ],
        ),
        id="storageclass-policies",
    ),
    pytest.param(
        Invalid(
            kinds.CSI_DRIVERS,
            make_csi_driver("bad.csi.example.com")
            .spec_field("fsGroupPolicy", "Sometimes")
            .spec_field("volumeLifecycleModes", ["Forever"])
            .spec_field("tokenRequests", [{"audience": "a", "expirationSeconds": 60}])
            .obj(),
            [
                ("spec.fsGroupPolicy", "FieldValueNotSupported"),
                ("spec.tokenRequests[0].expirationSeconds", "FieldValueInvalid"),
                ("spec.volumeLifecycleModes", "FieldValueNotSupported"),
            ],
        ),
        id="csidriver-spec",
    ),
    pytest.param(
        Invalid(
            kinds.CSI_NODES,
            make_csi_node("node-bad").driver(make_csi_driver().obj()["metadata"]["name"], "").obj(),
            [
                ("spec.drivers[1].nodeID", "FieldValueRequired"),
                ("spec.drivers[1].name", "FieldValueDuplicate"),
            ],
        ),
        id="csinode-drivers",
    ),
    pytest.param(
        Invalid(
            kinds.CSI_STORAGE_CAPACITIES,
            make_csi_storage_capacity("cap-bad")
            .field("storageClassName", "")
            .field("capacity", "-1Gi")
            .obj(),
            [("storageClassName", "FieldValueInvalid"), ("capacity", "FieldValueInvalid")],
        ),
        id="csistoragecapacity",
    ),
    pytest.param(
        Invalid(
            kinds.VOLUME_ATTACHMENTS,
            make_volume_attachment("va-bad")
            .spec_field("source", {})
            .spec_field("nodeName", "")
            .obj(),
            [("spec.source", "FieldValueRequired"), ("spec.nodeName", "FieldValueInvalid")],
        ),
        id="volumeattachment",
    ),
    pytest.param(
        Invalid(
            kinds.PERSISTENT_VOLUMES,
            make_persistent_volume("pv-bad").access_modes().source("hostPath", None).obj(),
            [("spec.accessModes", "FieldValueRequired"), ("spec", "FieldValueRequired")],
        ),
        id="persistentvolume-no-modes-no-source",
    ),
    pytest.param(
        Invalid(
            kinds.PERSISTENT_VOLUMES,
            _edit(
                make_persistent_volume("pv-bad").access_modes("ReadWriteOnce", "Sometimes").obj(),
                spec__capacity={"cpu": "1"},
                spec__nfs={"server": "nfs.example.com", "path": "/export"},
            ),
            [
                ("spec.accessModes", "FieldValueNotSupported"),
                ("spec.capacity", "FieldValueNotSupported"),
                ("spec.nfs", "FieldValueForbidden"),
            ],
        ),
        id="persistentvolume-modes-capacity-two-sources",
    ),
    pytest.param(
        Invalid(
            kinds.PERSISTENT_VOLUMES,
            make_persistent_volume("pv-bad").source("local", {"path": "/mnt/disk"}).obj(),
            [("spec.nodeAffinity", "FieldValueRequired")],
        ),
        id="persistentvolume-local-without-affinity",
    ),
    pytest.param(
        Invalid(
            kinds.PERSISTENT_VOLUME_CLAIMS,
            _edit(
                make_persistent_volume_claim("pvc-bad").volume_mode("Raw").obj(),
                spec__resources={},
            ),
            [
                ("spec.resources[storage]", "FieldValueRequired"),
                ("spec.volumeMode", "FieldValueNotSupported"),
            ],
        ),
        id="persistentvolumeclaim",
    ),
    pytest.param(
        Invalid(
            kinds.REPLICATION_CONTROLLERS,
            make_replication_controller("rc-bad")
            .selector({"app": "other"})
            .replicas(-1)
            .restart_policy("Never")
            .obj(),
            [
                ("spec.replicas", "FieldValueInvalid"),
                ("spec.template.metadata.labels", "FieldValueInvalid"),
                ("spec.template.spec.restartPolicy", "FieldValueNotSupported"),
            ],
        ),
        id="replicationcontroller",
    ),
    pytest.param(
        Invalid(
            kinds.POD_DISRUPTION_BUDGETS,
            make_pod_disruption_budget("pdb-bad", min_available="150%")
            .set("spec.maxUnavailable", 1)
            .obj(),
            [("spec", "FieldValueInvalid"), ("spec.minAvailable", "FieldValueInvalid")],
        ),
        id="poddisruptionbudget",
    ),
]


@pytest.mark.parametrize("case", INVALID)
async def test_invalid_objects_are_422_with_field_causes(
    http: aiohttp.ClientSession, case: Invalid
) -> None:
    code, body = await _call(http, "POST", _path(case.rt), case.obj)

    assert (code, body["reason"], body["details"]["kind"]) == (422, "Invalid", case.rt.kind)
    assert _causes(body) == case.want


@dataclass(frozen=True)
class Immutable:
    rt: ResourceType
    obj: Obj
    change: Callable[[Obj], Obj]
    want: list[tuple[str, str]]


IMMUTABLE = [
    pytest.param(
        Immutable(
            kinds.STORAGE_CLASSES,
            make_storage_class("sc-fixed").obj(),
            lambda o: _edit(
                o, provisioner="other.example.com", volumeBindingMode="WaitForFirstConsumer"
            ),
            [("provisioner", "FieldValueForbidden"), ("volumeBindingMode", "FieldValueInvalid")],
        ),
        id="storageclass",
    ),
    pytest.param(
        Immutable(
            kinds.CSI_DRIVERS,
            make_csi_driver("fixed.csi.example.com").obj(),
            lambda o: _edit(o, spec__attachRequired=False),
            [("spec.attachedRequired", "FieldValueInvalid")],
        ),
        id="csidriver",
    ),
    pytest.param(
        Immutable(
            kinds.VOLUME_ATTACHMENTS,
            make_volume_attachment("va-fixed").obj(),
            lambda o: _edit(o, spec__nodeName="node-2"),
            [("spec", "FieldValueInvalid")],
        ),
        id="volumeattachment",
    ),
    pytest.param(
        Immutable(
            kinds.PERSISTENT_VOLUMES,
            make_persistent_volume("pv-fixed").obj(),
            lambda o: _edit(o, spec__hostPath={"path": "/elsewhere"}),
            [("spec.persistentvolumesource", "FieldValueForbidden")],
        ),
        id="persistentvolume",
    ),
    pytest.param(
        Immutable(
            kinds.PERSISTENT_VOLUME_CLAIMS,
            make_persistent_volume_claim("pvc-fixed").obj(),
            lambda o: _edit(o, spec__accessModes=["ReadOnlyMany"]),
            [("spec", "FieldValueForbidden")],
        ),
        id="persistentvolumeclaim",
    ),
]


@pytest.mark.parametrize("case", IMMUTABLE)
async def test_immutable_fields(http: aiohttp.ClientSession, case: Immutable) -> None:
    name = case.obj["metadata"]["name"]
    _, created = await _call(http, "POST", _path(case.rt), case.obj)
    code, body = await _call(http, "PUT", _path(case.rt, name), case.change(created))

    assert code == 422, body
    assert _causes(body) == case.want


async def test_replication_controller_scale(http: aiohttp.ClientSession) -> None:
    rt = kinds.REPLICATION_CONTROLLERS
    await _call(http, "POST", _path(rt), make_replication_controller("scaled").obj())
    _, scale = await _call(http, "GET", _path(rt, "scaled", "scale"))
    put_code, _ = await _call(
        http, "PUT", _path(rt, "scaled", "scale"), {**scale, "spec": {"replicas": 4}}
    )
    _, rc = await _call(http, "GET", _path(rt, "scaled"))

    assert (scale["kind"], scale["apiVersion"]) == ("Scale", "autoscaling/v1")
    assert scale["spec"] == {"replicas": 1}
    assert scale["status"] == {"replicas": 0, "selector": "app=scaled"}
    assert (put_code, rc["spec"]["replicas"]) == (200, 4)


# --- kube-scheduler's informers ------------------------------------------------------------------

SCHEDULER_INFORMERS = [
    kinds.PODS,
    kinds.NODES,
    kinds.NAMESPACES,
    kinds.PERSISTENT_VOLUMES,
    kinds.PERSISTENT_VOLUME_CLAIMS,
    kinds.STORAGE_CLASSES,
    kinds.CSI_NODES,
    kinds.CSI_DRIVERS,
    kinds.CSI_STORAGE_CAPACITIES,
    kinds.VOLUME_ATTACHMENTS,
    kinds.SERVICES,
    kinds.REPLICATION_CONTROLLERS,
    kinds.REPLICA_SETS,
    kinds.STATEFUL_SETS,
    kinds.POD_DISRUPTION_BUDGETS,
]
"""What kube-scheduler 1.34's default profile lists and watches, cluster-wide, besides the DRA
kinds of the mode (`_dra_informers`)."""


def _dra_informers(mode: versions.Mode) -> list[ResourceType]:
    if mode.structured:
        return [kinds.RESOURCE_CLAIMS_V1, kinds.RESOURCE_SLICES, kinds.DEVICE_CLASSES]
    return [kinds.RESOURCE_CLAIMS, kinds.RESOURCE_CLASSES, kinds.POD_SCHEDULING_CONTEXTS]


def _cluster_path(rt: ResourceType) -> str:
    base = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
    return f"{base}/{rt.resource}"


@pytest_asyncio.fixture(
    scope="module", loop_scope="module", params=list(versions.MODES.values()), ids=str
)
async def mode_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[tuple[versions.Mode, HttpServer]]:
    mode: versions.Mode = request.param
    srv = await start_http_server(tmp_path_factory.mktemp(f"informers-{mode}"), mode=mode)
    yield mode, srv
    await srv.stop()


async def test_kube_scheduler_informers_list_and_watch(
    mode_server: tuple[versions.Mode, HttpServer],
) -> None:
    mode, server = mode_server
    answers: dict[str, tuple[int, int]] = {}
    # client-go's Accept with kube-scheduler's protobuf content type: protobuf answers for the
    # kinds that have a protobuf form, JSON for the others.
    accept = {"Accept": "application/vnd.kubernetes.protobuf, */*"}
    schemas = schemas_for(mode.name)
    async with server.session(auth.SCHEDULER) as scheduler:
        for rt in [*SCHEDULER_INFORMERS, *_dra_informers(mode)]:
            path = _cluster_path(rt)
            params = {"limit": "500", "resourceVersion": "0"}
            async with scheduler.get(path, params=params, headers=accept) as resp:
                listed = _list_body(schemas, resp.headers["Content-Type"], await resp.read())
                list_code = resp.status
            watch = {
                "allowWatchBookmarks": "true",
                "resourceVersion": listed.get("metadata", {}).get("resourceVersion", "0"),
                "timeoutSeconds": "1",
                "watch": "true",
            }
            async with scheduler.get(path, params=watch, headers=accept) as resp:
                answers[str(rt)] = (list_code, resp.status)

    assert answers == {str(rt): (200, 200) for rt in [*SCHEDULER_INFORMERS, *_dra_informers(mode)]}


def _list_body(schemas: Schemas, content_type: str, body: bytes) -> dict[str, Any]:
    """A list answer as a JSON dict, decoded as client-go would by its Content-Type."""
    if content_type != protobuf.CONTENT_TYPE:
        found: dict[str, Any] = orjson.loads(body)
        return found
    api_version, kind, raw = protobuf.unwrap(body)
    name = protobuf_serving.servable(schemas, api_version, kind)
    assert name is not None, (api_version, kind)
    return protobuf_codec.decode(schemas, name, raw)


# --- RBAC ----------------------------------------------------------------------------------------

ACCESS = [
    pytest.param(auth.SCHEDULER, (), "watch", "", "persistentvolumes", True, id="scheduler-pv"),
    pytest.param(
        auth.SCHEDULER, (), "watch", "storage.k8s.io", "csinodes", True, id="scheduler-csinodes"
    ),
    pytest.param(
        auth.SCHEDULER, (), "list", "policy", "poddisruptionbudgets", True, id="scheduler-pdbs"
    ),
    pytest.param(
        auth.SCHEDULER,
        (),
        "update",
        "",
        "persistentvolumeclaims",
        True,
        id="volume-scheduler-updates-claims",
    ),
    pytest.param(
        auth.SCHEDULER, (), "delete", "", "persistentvolumes", False, id="scheduler-no-pv-delete"
    ),
    pytest.param(
        auth.SCHEDULER,
        (),
        "update",
        "storage.k8s.io",
        "storageclasses",
        False,
        id="scheduler-no-class-update",
    ),
    pytest.param("viewer", ("viewers",), "get", "", "persistentvolumeclaims", True, id="view-pvc"),
    pytest.param("viewer", ("viewers",), "get", "", "replicationcontrollers", True, id="view-rc"),
    pytest.param(
        "viewer", ("viewers",), "create", "", "persistentvolumeclaims", False, id="view-no-create"
    ),
    pytest.param(
        "editor", ("editors",), "create", "policy", "poddisruptionbudgets", True, id="edit-pdb"
    ),
    pytest.param("editor", ("editors",), "create", "", "persistentvolumes", False, id="edit-no-pv"),
]


async def test_bootstrap_rbac_of_the_kinds(http: aiohttp.ClientSession) -> None:
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    for group, role in (("viewers", "view"), ("editors", "edit")):
        await _call(
            http,
            "POST",
            f"{rbac}/namespaces/default/rolebindings",
            {
                "metadata": {"name": f"{group}-{role}"},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": role,
                },
                "subjects": [
                    {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}
                ],
            },
        )
    answers = {}
    for param in ACCESS:
        user, groups, verb, group, resource, _ = param.values
        _, review = await _call(
            http,
            "POST",
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            {
                "spec": {
                    "user": user,
                    "groups": list(groups),
                    "resourceAttributes": {
                        "namespace": "default",
                        "verb": verb,
                        "group": group,
                        "resource": resource,
                    },
                }
            },
        )
        answers[param.id] = review["status"]["allowed"]

    assert answers == {param.id: param.values[-1] for param in ACCESS}
