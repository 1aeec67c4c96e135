"""The in-tree cloud and network volume sources in protobuf: every source of a pod's volume and
of a PersistentVolume is created from a protobuf body and read back, in JSON and protobuf, as
sent; a pod and a volume as upstream encodes them (by hand, field numbers of core/v1
generated.proto) decode to their sources."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from draplane.api import kinds, versions
from draplane.api.meta import Obj
from draplane.api.schema import schemas_for
from draplane.apiserver import protobuf, protobuf_codec
from draplane.testing.builders import make_pod
from draplane.testing.httpserver import HttpServer
from draplane.testing.protowire import envelope, ld, md_bytes, unwrap, vi
from draplane.testing.storagebuilders import make_persistent_volume

PB = "application/vnd.kubernetes.protobuf"
PODS = "/api/v1/namespaces/default/pods"
PVS = "/api/v1/persistentvolumes"
SCHEMAS = schemas_for(versions.CLASSIC.name)

_LOCAL = {"name": "creds"}
_SECRET = {"name": "creds", "namespace": "storage"}
_SHARED: dict[str, Obj] = {
    "gcePersistentDisk": {"pdName": "d", "fsType": "ext4", "partition": 1, "readOnly": True},
    "awsElasticBlockStore": {"volumeID": "vol-1", "fsType": "xfs", "partition": 2},
    "fc": {"targetWWNs": ["w1"], "lun": 0, "fsType": "ext4", "readOnly": True, "wwids": ["i"]},
    "flocker": {"datasetName": "ds", "datasetUUID": "u-1"},
    "vsphereVolume": {
        "volumePath": "[ds] v.vmdk",
        "fsType": "ext4",
        "storagePolicyName": "gold",
        "storagePolicyID": "p-1",
    },
    "quobyte": {
        "registry": "r:7861",
        "volume": "v",
        "readOnly": True,
        "user": "u",
        "group": "g",
        "tenant": "t",
    },
    "azureDisk": {
        "diskName": "d",
        "diskURI": "https://d",
        "cachingMode": "None",
        "fsType": "ext4",
        "readOnly": False,
        "kind": "Managed",
    },
    "photonPersistentDisk": {"pdID": "p", "fsType": "ext4"},
    "portworxVolume": {"volumeID": "v", "fsType": "ext4", "readOnly": True},
}


def _sources(secret: Obj, persistent: bool) -> dict[str, Obj]:
    """Every in-tree source with all its fields set (a PersistentVolume's name Secrets with
    their namespace; StorageOS's an ObjectReference)."""
    extra: dict[str, Obj] = {
        "glusterfs": {"endpointsNamespace": "storage"},
        "azureFile": {"secretNamespace": "storage"},
    }
    out: dict[str, Obj] = {
        **_SHARED,
        "glusterfs": {"endpoints": "gl", "path": "/vol", "readOnly": True},
        "rbd": {
            "monitors": ["m1:6789", "m2:6789"],
            "image": "img",
            "fsType": "ext4",
            "pool": "p",
            "user": "u",
            "keyring": "/k",
            "secretRef": secret,
            "readOnly": True,
        },
        "iscsi": {
            "targetPortal": "10.0.0.1:3260",
            "iqn": "iqn.2001-04.com.example:storage",
            "lun": 3,
            "iscsiInterface": "default",
            "fsType": "ext4",
            "readOnly": True,
            "portals": ["10.0.0.2:3260"],
            "chapAuthDiscovery": True,
            "chapAuthSession": True,
            "secretRef": secret,
            "initiatorName": "iqn.1994-05.com.example:node",
        },
        "cinder": {"volumeID": "c", "fsType": "ext4", "readOnly": True, "secretRef": secret},
        "cephfs": {
            "monitors": ["m1"],
            "path": "/",
            "user": "u",
            "secretFile": "/s",
            "secretRef": secret,
            "readOnly": True,
        },
        "flexVolume": {
            "driver": "example.com/flex",
            "fsType": "ext4",
            "secretRef": secret,
            "readOnly": True,
            "options": {"a": "b"},
        },
        "azureFile": {"secretName": "az", "shareName": "share", "readOnly": True},
        "scaleIO": {
            "gateway": "https://gw",
            "system": "s",
            "secretRef": secret,
            "sslEnabled": True,
            "protectionDomain": "pd",
            "storagePool": "sp",
            "storageMode": "ThinProvisioned",
            "volumeName": "v",
            "fsType": "xfs",
            "readOnly": True,
        },
        "storageos": {
            "volumeName": "v",
            "volumeNamespace": "ns",
            "fsType": "ext4",
            "readOnly": True,
            "secretRef": {**secret, "kind": "Secret"} if persistent else secret,
        },
    }
    if persistent:
        for name, fields in extra.items():
            out[name] = {**out[name], **fields}
    else:
        out["gitRepo"] = {
            "repository": "https://r.example/r.git",
            "revision": "a",
            "directory": ".",
        }
    return out


def _pod(source: str, value: Obj) -> Obj:
    return make_pod(f"pb-{source.lower()}", "default").volume("v", **{source: value}).obj()


def _pv(source: str, value: Obj) -> Obj:
    pv = make_persistent_volume(f"pb-{source.lower()}").obj()
    del pv["spec"]["hostPath"]
    pv["spec"][source] = value
    return pv


CASES = [
    pytest.param(
        PODS, kinds.PODS, _pod(name, value), ("spec", "volumes", 0, name), id=f"pod-{name}"
    )
    for name, value in _sources(_LOCAL, persistent=False).items()
] + [
    pytest.param(PVS, kinds.PERSISTENT_VOLUMES, _pv(name, value), ("spec", name), id=f"pv-{name}")
    for name, value in _sources(_SECRET, persistent=True).items()
]


async def _send(
    http: aiohttp.ClientSession, method: str, path: str, body: bytes | None = None
) -> tuple[int, bytes]:
    headers = {"Content-Type": PB, "Accept": PB}
    async with http.request(method, path, data=body, headers=headers) as resp:
        return resp.status, await resp.read()


def _at(obj: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        obj = obj[step]
    return obj


@pytest.mark.parametrize(("path", "rt", "obj", "where"), CASES)
async def test_every_in_tree_source_round_trips_through_protobuf(
    server: HttpServer,
    http: aiohttp.ClientSession,
    path: str,
    rt: kinds.ResourceType,
    obj: Obj,
    where: tuple[Any, ...],
) -> None:
    struct_name = "io.k8s.api.core.v1." + rt.kind
    body = protobuf.wrap("v1", rt.kind, protobuf_codec.encode(SCHEMAS, struct_name, obj))

    code, created = await _send(http, "POST", path, body)

    assert code == 201, created[:300]
    name = obj["metadata"]["name"]
    stored = await server.client().get(rt, name, "default" if rt.namespaced else "")
    assert _at(stored, where) == _at(obj, where)
    _, got = await _send(http, "GET", f"{path}/{name}")
    assert protobuf_codec.decode(SCHEMAS, struct_name, unwrap(got)[1]) == {
        k: v for k, v in stored.items() if k not in ("apiVersion", "kind")
    }


def _s(number: int, value: str) -> bytes:
    return ld(number, value.encode())


_CONTAINER = ld(2, _s(1, "app") + _s(2, "busybox"))
_ISCSI = (
    _s(1, "10.0.0.1:3260")
    + _s(2, "iqn.x")
    + vi(3, 7)
    + vi(11, 1)
    + ld(10, _s(1, "chap"))
    + _s(12, "iqn.node")
)
_RBD = _s(1, "m1") + _s(2, "img") + ld(7, _s(1, "creds") + _s(2, "storage"))
_CAPACITY = ld(1, _s(1, "storage") + ld(2, _s(1, "1Gi")))
UPSTREAM = {
    "pod-iscsi": (
        PODS,
        kinds.PODS,
        envelope(
            "v1",
            "Pod",
            ld(1, md_bytes("pb-up-iscsi"))
            + ld(2, ld(1, _s(1, "v") + ld(2, ld(8, _ISCSI))) + _CONTAINER),
        ),
        ("spec", "volumes", 0, "iscsi"),
        {
            "targetPortal": "10.0.0.1:3260",
            "iqn": "iqn.x",
            "lun": 7,
            "chapAuthSession": True,
            "secretRef": {"name": "chap"},
            "initiatorName": "iqn.node",
        },
    ),
    "pv-rbd": (
        PVS,
        kinds.PERSISTENT_VOLUMES,
        envelope(
            "v1",
            "PersistentVolume",
            ld(1, md_bytes("pb-up-rbd"))
            + ld(2, _CAPACITY + ld(2, ld(6, _RBD)) + _s(3, "ReadWriteOnce")),
        ),
        ("spec", "rbd"),
        {
            "monitors": ["m1"],
            "image": "img",
            "secretRef": {"name": "creds", "namespace": "storage"},
        },
    ),
}


@pytest.mark.parametrize(("path", "rt", "body", "where", "want"), UPSTREAM.values(), ids=UPSTREAM)
async def test_upstream_encoded_in_tree_sources(
    server: HttpServer,
    http: aiohttp.ClientSession,
    path: str,
    rt: kinds.ResourceType,
    body: bytes,
    where: tuple[Any, ...],
    want: Obj,
) -> None:
    code, created = await _send(http, "POST", path, body)

    assert code == 201, created[:300]
    name = protobuf_codec.decode(SCHEMAS, "io.k8s.api.core.v1." + rt.kind, unwrap(created)[1])[
        "metadata"
    ]["name"]
    stored = await server.client().get(rt, name, "default" if rt.namespaced else "")
    assert _at(stored, where) == want
