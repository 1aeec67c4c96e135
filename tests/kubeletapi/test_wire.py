"""The generated kubelet APIs carry upstream's wire: gRPC method paths and every message's field
numbers and types, as k8s.io/kubelet/pkg/apis/{pluginregistration/v1,dra/v1,dra/v1beta1}
define them (spec/kubelet-plugins.md)."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf.descriptor import FieldDescriptor

from draplane.kubeletapi import dra_modules, registration

STRING, BOOL, MESSAGE = FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BOOL, "message"

REGISTRATION_FIELDS = {
    "PluginInfo": [("type", 1, STRING), ("name", 2, STRING), ("endpoint", 3, STRING),
                   ("supported_versions", 4, STRING)],
    "RegistrationStatus": [("plugin_registered", 1, BOOL), ("error", 2, STRING)],
    "RegistrationStatusResponse": [],
    "InfoRequest": [],
}  # fmt: skip
DRA_FIELDS = {
    "Claim": [("namespace", 1, STRING), ("uid", 2, STRING), ("name", 3, STRING)],
    "NodePrepareResourcesRequest": [("claims", 1, MESSAGE)],
    "NodePrepareResourcesResponse": [("claims", 1, MESSAGE)],
    "NodePrepareResourceResponse": [("devices", 1, MESSAGE), ("error", 2, STRING)],
    "Device": [("request_names", 1, STRING), ("pool_name", 2, STRING),
               ("device_name", 3, STRING), ("cdi_device_ids", 4, STRING)],
    "NodeUnprepareResourcesRequest": [("claims", 1, MESSAGE)],
    "NodeUnprepareResourcesResponse": [("claims", 1, MESSAGE)],
    "NodeUnprepareResourceResponse": [("error", 1, STRING)],
}  # fmt: skip


def _fields(descriptor: Any) -> list[tuple[str, int, object]]:
    return [
        (f.name, f.number, MESSAGE if f.type == FieldDescriptor.TYPE_MESSAGE else f.type)
        for f in descriptor.fields
    ]


def _methods(module: Any) -> list[str]:
    [service] = module.DESCRIPTOR.services_by_name.values()
    return [f"/{service.full_name}/{m.name}" for m in service.methods]


def test_registration_wire() -> None:
    messages = registration.DESCRIPTOR.message_types_by_name
    assert {name: _fields(messages[name]) for name in REGISTRATION_FIELDS} == REGISTRATION_FIELDS
    assert _methods(registration) == [
        "/pluginregistration.Registration/GetInfo",
        "/pluginregistration.Registration/NotifyRegistrationStatus",
    ]


@pytest.mark.parametrize("version", ["v1", "v1beta1"])
def test_dra_wire(version: str) -> None:
    module, _ = dra_modules(f"{version}.DRAPlugin")
    messages = module.DESCRIPTOR.message_types_by_name
    assert {name: _fields(messages[name]) for name in DRA_FIELDS} == DRA_FIELDS
    package = f"k8s.io.kubelet.pkg.apis.dra.{version}"
    assert _methods(module) == [
        f"/{package}.DRAPlugin/NodePrepareResources",
        f"/{package}.DRAPlugin/NodeUnprepareResources",
    ]
    response = messages["NodePrepareResourcesResponse"].fields_by_name["claims"]
    assert response.message_type.GetOptions().map_entry
    assert _fields(response.message_type) == [("key", 1, STRING), ("value", 2, MESSAGE)]
