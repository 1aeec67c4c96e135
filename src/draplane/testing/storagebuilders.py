"""Builders of the volume kinds: core/v1 PersistentVolume and PersistentVolumeClaim and the
storage.k8s.io/v1 kinds, `make_persistent_volume("pv1").capacity("5Gi").obj()`.

Each starts valid: a volume of 1Gi ReadWriteOnce on a hostPath, a claim asking 1Gi
ReadWriteOnce, a StorageClass of provisioner `csi.example.com`, a CSIDriver of that name, a
CSINode with that driver, a CSIStorageCapacity of class `standard`, a VolumeAttachment of
volume `pv1` to node `node-1`. Setters are named after the fields they set.
"""

from __future__ import annotations

from typing import Any, Self

from draplane.api.meta import Obj, deep_copy
from draplane.testing.basebuilder import _Builder

PROVISIONER = "csi.example.com"


class StorageBuilder(_Builder):
    """Any of the volume kinds; `set(path, value)` (the base's) reaches any field."""

    @property
    def _spec(self) -> Obj:
        spec: Obj = self._obj.setdefault("spec", {})
        return spec

    # PersistentVolume and PersistentVolumeClaim
    def access_modes(self, *modes: str) -> Self:
        self._spec["accessModes"] = list(modes)
        return self

    def capacity(self, storage: str) -> Self:
        """A volume's spec.capacity, or a claim's requested storage."""
        if self._obj["kind"] == "PersistentVolumeClaim":
            self._spec.setdefault("resources", {}).setdefault("requests", {})["storage"] = storage
        else:
            self._spec["capacity"] = {"storage": storage}
        return self

    def storage_class_name(self, value: str) -> Self:
        self._spec["storageClassName"] = value
        return self

    def volume_mode(self, value: str) -> Self:
        self._spec["volumeMode"] = value
        return self

    def volume_name(self, value: str) -> Self:
        self._spec["volumeName"] = value
        return self

    def reclaim_policy(self, value: str) -> Self:
        if self._obj["kind"] == "StorageClass":
            self._obj["reclaimPolicy"] = value
        else:
            self._spec["persistentVolumeReclaimPolicy"] = value
        return self

    def claim_ref(self, namespace: str, name: str) -> Self:
        self._spec["claimRef"] = {
            "kind": "PersistentVolumeClaim",
            "namespace": namespace,
            "name": name,
        }
        return self

    def source(self, name: str, value: Obj | None) -> Self:
        """Replace the volume's source by `name` (None: no source)."""
        for key in ("hostPath", "local", "csi", "nfs"):
            self._spec.pop(key, None)
        if value is not None:
            self._spec[name] = value
        return self

    def node_affinity(self, key: str, *values: str) -> Self:
        term = {"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}
        self._spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [term]}}
        return self

    # StorageClass
    def provisioner(self, value: str) -> Self:
        self._obj["provisioner"] = value
        return self

    def volume_binding_mode(self, value: str) -> Self:
        self._obj["volumeBindingMode"] = value
        return self

    def parameters(self, **values: str) -> Self:
        self._obj["parameters"] = dict(values)
        return self

    def default_class(self) -> Self:
        return self.annotation("storageclass.kubernetes.io/is-default-class", "true")

    # CSIDriver, CSINode, CSIStorageCapacity, VolumeAttachment
    def spec_field(self, key: str, value: Any) -> Self:
        self._spec[key] = value
        return self

    def driver(self, name: str, node_id: str, *topology_keys: str) -> Self:
        self._spec.setdefault("drivers", []).append(
            {"name": name, "nodeID": node_id, "topologyKeys": list(topology_keys)}
        )
        return self

    def field(self, key: str, value: Any) -> Self:
        """A top-level field (CSIStorageCapacity's capacity, storageClassName, ...)."""
        self._obj[key] = value
        return self


def _object(api_version: str, kind: str, name: str, namespace: str = "", **fields: Any) -> Obj:
    md: Obj = {"name": name, "namespace": namespace} if namespace else {"name": name}
    return {"apiVersion": api_version, "kind": kind, "metadata": md, **fields}


def make_persistent_volume(name: str = "pv1") -> StorageBuilder:
    return StorageBuilder(
        _object(
            "v1",
            "PersistentVolume",
            name,
            spec={
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "hostPath": {"path": f"/mnt/{name}"},
            },
        )
    )


def make_persistent_volume_claim(name: str = "data", namespace: str = "default") -> StorageBuilder:
    return StorageBuilder(
        _object(
            "v1",
            "PersistentVolumeClaim",
            name,
            namespace,
            spec={"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        )
    )


def make_storage_class(name: str = "standard") -> StorageBuilder:
    return StorageBuilder(
        _object("storage.k8s.io/v1", "StorageClass", name, provisioner=PROVISIONER)
    )


def make_csi_driver(name: str = PROVISIONER) -> StorageBuilder:
    return StorageBuilder(_object("storage.k8s.io/v1", "CSIDriver", name, spec={}))


def make_csi_node(name: str = "node-1") -> StorageBuilder:
    return StorageBuilder(
        _object(
            "storage.k8s.io/v1",
            "CSINode",
            name,
            spec={"drivers": [{"name": PROVISIONER, "nodeID": name}]},
        )
    )


def make_csi_storage_capacity(
    name: str = "capacity-1", namespace: str = "default"
) -> StorageBuilder:
    return StorageBuilder(
        _object(
            "storage.k8s.io/v1",
            "CSIStorageCapacity",
            name,
            namespace,
            storageClassName="standard",
            capacity="10Gi",
        )
    )


def make_volume_attachment(name: str = "attach-1") -> StorageBuilder:
    return StorageBuilder(
        _object(
            "storage.k8s.io/v1",
            "VolumeAttachment",
            name,
            spec={
                "attacher": PROVISIONER,
                "source": {"persistentVolumeName": "pv1"},
                "nodeName": "node-1",
            },
        )
    )


def from_storage_object(obj: Obj) -> StorageBuilder:
    return StorageBuilder(deep_copy(obj))
