"""Declarations of the storage.k8s.io/v1 kinds (pkg/registry/storage/*): StorageClass,
CSIDriver, CSINode, CSIStorageCapacity and VolumeAttachment.

A VolumeAttachment's create resets its status (`attached: false`) and its `status` subresource
writes only the status; the others have no status. DELETE answers with a Status for all of
them. Nothing attaches volumes or provisions from a class (docs/fidelity.md).
"""

from __future__ import annotations

from draplane.api import kinds
from draplane.api.meta import Obj
from draplane.api.validation import csi, storage
from draplane.apiserver import volumeprinters
from draplane.apiserver.strategies import ResourceStrategy


def _reset_attachment_status(obj: Obj) -> None:
    obj["status"] = {"attached": False}


STRATEGIES = (
    ResourceStrategy(
        kinds.STORAGE_CLASSES,
        validate=storage.validate_storage_class,
        validate_update=storage.validate_storage_class_update,
        defaults=storage.default_storage_class,
        printer=volumeprinters.STORAGE_CLASS,
    ),
    ResourceStrategy(
        kinds.CSI_DRIVERS,
        validate=csi.validate_csi_driver,
        validate_update=csi.validate_csi_driver_update,
        defaults=csi.default_csi_driver,
        printer=volumeprinters.CSI_DRIVER,
    ),
    ResourceStrategy(
        kinds.CSI_NODES,
        validate=csi.validate_csi_node,
        validate_update=csi.validate_csi_node_update,
        printer=volumeprinters.CSI_NODE,
    ),
    ResourceStrategy(
        kinds.CSI_STORAGE_CAPACITIES,
        validate=csi.validate_csi_storage_capacity,
        validate_update=csi.validate_csi_storage_capacity_update,
        printer=volumeprinters.CSI_STORAGE_CAPACITY,
    ),
    ResourceStrategy(
        kinds.VOLUME_ATTACHMENTS,
        validate=storage.validate_volume_attachment,
        validate_update=storage.validate_volume_attachment_update,
        validate_status=storage.validate_volume_attachment_status_update,
        printer=volumeprinters.VOLUME_ATTACHMENT,
        prepare_for_create=_reset_attachment_status,
    ),
)
