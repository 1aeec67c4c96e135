"""/openapi/v2: the smallest document that lets kubectl's client-side validation proceed.

kubectl (1.27-1.33) downloads /openapi/v2 as protobuf before `apply`/`create`; a gnostic
`Document{swagger: "2.0", info{title, version}}` with no definitions makes it skip client-side
schema checks and send `fieldValidation=Strict` (the server validates instead).
"""

from __future__ import annotations

from draplane.apiserver.discovery import KUBE_VERSION

# Go's mime parser rejects the `@v1.0` spelling kubectl puts in its Accept header.
CONTENT_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (all lengths here are < 128)."""
    if len(payload) >= 128:
        raise ValueError("field too long for a one-byte length")
    return bytes([(number << 3) | 2, len(payload)]) + payload


def openapi_v2_document(version: str = KUBE_VERSION) -> bytes:
    info = _field(1, b"Kubernetes") + _field(2, version.encode())
    return _field(1, b"2.0") + _field(2, info)
