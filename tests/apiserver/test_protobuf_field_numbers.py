"""Protobuf field numbers of every served kind's struct tree, in each mode: unique within a
struct (counting each embedded Go struct's fields apart, as `embedded` says, and no plain field
on an embedded struct's number). That every field
has a number is `test_protobuf_kinds`' `EXPECTED_GAP`; that the numbers are upstream's is the
tables of tests/api/test_schema_tags_*.py."""

from __future__ import annotations

import pytest

from draplane.api import versions
from draplane.api.schema import schemas_for
from draplane.apiserver.protobuf_serving import message_structs

MODES = [pytest.param(mode, id=mode.name) for mode in versions.MODES.values()]


def _structs(mode: versions.Mode) -> dict[str, list[str]]:
    """Each struct reachable from a kind of the mode's schemas (served kinds, their lists and
    the subresources' kinds such as Scale and TokenRequest) -> the kinds it is reached from."""
    schemas = schemas_for(mode.name)
    reached: dict[str, list[str]] = {}
    for (_, _, kind), root in schemas.kinds.items():
        for struct in message_structs(schemas, root.name):
            reached.setdefault(struct.name, []).append(kind)
    return reached


@pytest.mark.parametrize("mode", MODES)
def test_numbers_are_unique_within_each_embedded_struct(mode: versions.Mode) -> None:
    schemas = schemas_for(mode.name)
    clashes = {}
    for name in _structs(mode):
        numbered = [fld for fld in schemas.get(name).fields if fld.tag]
        keys = [(fld.embedded, fld.tag) for fld in numbered]
        found = [f"{k} twice" for k in sorted(set(keys)) if keys.count(k) > 1]
        # An embedded struct is itself a field of the message: no plain field may take its number.
        plain = {fld.tag for fld in numbered if not fld.embedded}
        found += [f"field {n} is an embedded struct" for n in sorted(plain & {e for e, _ in keys})]
        if found:
            clashes[name] = found
    assert clashes == {}


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        pytest.param(versions.STRUCTURED, "io.k8s.api.resource.v1.DeviceRequest", id="1.36-dra"),
        pytest.param(versions.STRUCTURED, "io.k8s.api.core.v1.ISCSIVolumeSource", id="1.36-volume"),
        pytest.param(versions.CLASSIC, "io.k8s.api.resource.v1alpha2.ResourceClaimSpec", id="1.28"),
        pytest.param(versions.STRUCTURED, "io.k8s.api.autoscaling.v1.ScaleStatus", id="scale"),
        pytest.param(
            versions.STRUCTURED, "io.k8s.api.authentication.v1.TokenRequestSpec", id="token"
        ),
        pytest.param(
            versions.CLASSIC,
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ValidationRule",
            id="crd-rules",
        ),
        pytest.param(
            versions.CLASSIC,
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
            id="through-wire",
        ),
    ],
)
def test_the_walk_reaches_nested_structs(mode: versions.Mode, expected: str) -> None:
    assert expected in _structs(mode)
