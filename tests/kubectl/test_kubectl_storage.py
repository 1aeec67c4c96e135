"""The real kubectl against the volume kinds, ReplicationControllers and PodDisruptionBudgets:
`kubectl get` prints each kind's server-side columns (`kubectl get sc/pv/pvc/rc/pdb/csidriver/
csinode/volumeattachment/csistoragecapacity`, PV and PVC `-o wide`) on the newest installed
version, `kubectl scale rc` and `get all` name the ReplicationController, `kubectl
api-resources` lists the kinds and `kubectl create -f` then `get pvc` shows a Pending claim on
every installed version."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from draplane.api import kinds
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.testing.builders import make_pod_disruption_budget, make_replication_controller
from draplane.testing.httpserver import HttpServer
from draplane.testing.kubectl import VERSIONS, Kubectl, kubectl_binary
from draplane.testing.storagebuilders import (
    make_csi_driver,
    make_csi_node,
    make_csi_storage_capacity,
    make_persistent_volume,
    make_persistent_volume_claim,
    make_storage_class,
    make_volume_attachment,
)

pytestmark = pytest.mark.kubectl

if not any(kubectl_binary(v) for v in VERSIONS):
    pytest.skip("no versioned kubectl binaries installed", allow_module_level=True)


def _rows(text: str) -> list[dict[str, str]]:
    """kubectl's table as one dict per row, cells cut at the header's column starts (empty
    cells stay empty)."""
    lines = [line for line in text.splitlines() if line.strip()]
    header = lines[0]
    starts = [i for i, ch in enumerate(header) if ch != " " and (i == 0 or header[i - 1] == " ")]
    # A header of two words ("ACCESS MODES") is one column: a start one space after a word.
    starts = [s for s in starts if s == 0 or header[s - 2] == " "]
    bounds = [*starts[1:], None]
    names = [header[s:e].strip() for s, e in zip(starts, bounds, strict=True)]
    return [
        {n: line[s:e].strip() for n, s, e in zip(names, starts, bounds, strict=True)}
        for line in lines[1:]
    ]


@dataclass(frozen=True)
class Printed:
    rt: ResourceType
    obj: Obj
    resource: str
    """What `kubectl get` is given."""
    want: dict[str, str]
    """Columns (as kubectl heads them) -> cells, AGE left out."""
    wide: bool = False


CASES = [
    pytest.param(
        Printed(
            kinds.STORAGE_CLASSES,
            make_storage_class("fast").default_class().obj(),
            "sc",
            {
                "NAME": "fast (default)",
                "PROVISIONER": "csi.example.com",
                "RECLAIMPOLICY": "Delete",
                "VOLUMEBINDINGMODE": "Immediate",
                "ALLOWVOLUMEEXPANSION": "false",
            },
        ),
        id="sc",
    ),
    pytest.param(
        Printed(
            kinds.PERSISTENT_VOLUMES,
            make_persistent_volume("pv1")
            .capacity("5Gi")
            .access_modes("ReadWriteMany", "ReadWriteOnce")
            .storage_class_name("fast")
            .claim_ref("default", "data")
            .obj(),
            "pv",
            {
                "NAME": "pv1",
                "CAPACITY": "5Gi",
                "ACCESS MODES": "RWO,RWX",
                "RECLAIM POLICY": "Retain",
                "STATUS": "Pending",
                "CLAIM": "default/data",
                "STORAGECLASS": "fast",
                "VOLUMEATTRIBUTESCLASS": "<unset>",
                "REASON": "",
                "VOLUMEMODE": "Filesystem",
            },
            wide=True,
        ),
        id="pv",
    ),
    pytest.param(
        Printed(
            kinds.PERSISTENT_VOLUME_CLAIMS,
            make_persistent_volume_claim("data").storage_class_name("fast").obj(),
            "pvc",
            {
                "NAME": "data",
                "STATUS": "Pending",
                "VOLUME": "",
                "CAPACITY": "",
                "ACCESS MODES": "",
                "STORAGECLASS": "fast",
                "VOLUMEATTRIBUTESCLASS": "<unset>",
                "VOLUMEMODE": "Filesystem",
            },
            wide=True,
        ),
        id="pvc",
    ),
    pytest.param(
        Printed(
            kinds.REPLICATION_CONTROLLERS,
            make_replication_controller("web").replicas(2).obj(),
            "rc",
            {"NAME": "web", "DESIRED": "2", "CURRENT": "0", "READY": "0"},
        ),
        id="rc",
    ),
    pytest.param(
        Printed(
            kinds.POD_DISRUPTION_BUDGETS,
            make_pod_disruption_budget("web", min_available="50%").obj(),
            "pdb",
            {
                "NAME": "web",
                "MIN AVAILABLE": "50%",
                "MAX UNAVAILABLE": "N/A",
                "ALLOWED DISRUPTIONS": "0",
            },
        ),
        id="pdb",
    ),
    pytest.param(
        Printed(
            kinds.CSI_DRIVERS,
            make_csi_driver().obj(),
            "csidriver",
            {
                "NAME": "csi.example.com",
                "ATTACHREQUIRED": "true",
                "PODINFOONMOUNT": "false",
                "STORAGECAPACITY": "false",
                "TOKENREQUESTS": "<unset>",
                "REQUIRESREPUBLISH": "false",
                "MODES": "Persistent",
            },
        ),
        id="csidriver",
    ),
    pytest.param(
        Printed(
            kinds.CSI_NODES, make_csi_node().obj(), "csinode", {"NAME": "node-1", "DRIVERS": "1"}
        ),
        id="csinode",
    ),
    pytest.param(
        Printed(
            kinds.VOLUME_ATTACHMENTS,
            make_volume_attachment().obj(),
            "volumeattachment",
            {
                "NAME": "attach-1",
                "ATTACHER": "csi.example.com",
                "PV": "pv1",
                "NODE": "node-1",
                "ATTACHED": "false",
            },
        ),
        id="volumeattachment",
    ),
    pytest.param(
        Printed(
            kinds.CSI_STORAGE_CAPACITIES,
            make_csi_storage_capacity().obj(),
            "csistoragecapacity",
            {"NAME": "capacity-1", "STORAGECLASSNAME": "standard", "CAPACITY": "10Gi"},
        ),
        id="csistoragecapacity",
    ),
]


@pytest.fixture
def kubectl_newest(server: HttpServer, tmp_path: Path) -> Kubectl:
    version = next(v for v in reversed(VERSIONS) if kubectl_binary(v))
    binary = kubectl_binary(version)
    assert binary is not None
    return Kubectl(binary, version, server.kubeconfig_path, tmp_path / "kube-cache")


@pytest.mark.parametrize("case", CASES)
async def test_get_prints_the_kinds_columns(
    kubectl_newest: Kubectl, server: HttpServer, case: Printed
) -> None:
    await server.client().create(case.rt, case.obj, "default" if case.rt.namespaced else "")

    text = await kubectl_newest.run("get", case.resource, *(["-o", "wide"] if case.wide else []))

    rows = _rows(text)
    assert [name for name in rows[0] if name != "AGE"] == list(case.want)
    assert {k: v for k, v in rows[0].items() if k != "AGE"} == case.want


API_RESOURCES = {
    "persistentvolumes": ["pv", "v1", "false", "PersistentVolume"],
    "persistentvolumeclaims": ["pvc", "v1", "true", "PersistentVolumeClaim"],
    "replicationcontrollers": ["rc", "v1", "true", "ReplicationController"],
    "poddisruptionbudgets": ["pdb", "policy/v1", "true", "PodDisruptionBudget"],
    "storageclasses": ["sc", "storage.k8s.io/v1", "false", "StorageClass"],
    "csidrivers": ["storage.k8s.io/v1", "false", "CSIDriver"],
    "csinodes": ["storage.k8s.io/v1", "false", "CSINode"],
    "csistoragecapacities": ["storage.k8s.io/v1", "true", "CSIStorageCapacity"],
    "volumeattachments": ["storage.k8s.io/v1", "false", "VolumeAttachment"],
}


async def test_api_resources_and_a_pending_claim(kubectl: Kubectl, tmp_path: Path) -> None:
    listed = await kubectl.run("api-resources")
    manifest = tmp_path / "claim.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: logs}\n"
        "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 2Gi}}}\n"
    )
    created = await kubectl.run("create", "-f", str(manifest))
    phase = await kubectl.run("get", "pvc", "logs", "-o", "jsonpath={.status.phase}")

    rows = {line.split()[0]: line.split()[1:] for line in listed.splitlines()[1:]}
    assert {name: rows.get(name) for name in API_RESOURCES} == API_RESOURCES
    assert created.strip() == "persistentvolumeclaim/logs created"
    assert phase == "Pending"


async def test_scale_and_get_all_of_a_replication_controller(
    kubectl_newest: Kubectl, server: HttpServer
) -> None:
    client = server.client()
    await client.create(kinds.REPLICATION_CONTROLLERS, make_replication_controller("web").obj())

    scaled = await kubectl_newest.run("scale", "rc/web", "--replicas=3")
    everything = await kubectl_newest.run("get", "all", "-o", "name")

    assert scaled.strip() == "replicationcontroller/web scaled"
    assert "replicationcontroller/web" in everything.split()
    rc = await client.get(kinds.REPLICATION_CONTROLLERS, "web", "default")
    assert rc["spec"]["replicas"] == 3
