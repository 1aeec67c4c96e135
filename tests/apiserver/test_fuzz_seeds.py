"""The fuzz suite's seed corpus: hostile requests that each once broke the API server (a 5xx,
a traceback, a store of something unbounded or unreadable), with the answer each must get now.

Every case also passes the fuzz invariants (`hostile.check`: no 5xx, no traceback, a rejected
write changes nothing). Cases run in order against one seeded server per module.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field
from typing import Any

import pytest

from draplane.api import kinds, limits
from draplane.api.kinds import ResourceType
from draplane.testing.hostile import Hostile

pytestmark = pytest.mark.asyncio(loop_scope="module")

CM = kinds.CONFIGMAPS
JSON_PATCH = "application/json-patch+json"
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"
YAML = "application/yaml"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


@dataclass(frozen=True)
class Seed:
    method: str
    rt: ResourceType
    name: str
    body: Any
    codes: tuple[int, ...]
    content_type: str = "application/json"
    subresource: str = ""
    query: str = ""
    headers: dict[str, str] = field(default_factory=dict)


def _copy_bomb(ops: int) -> list[dict[str, str]]:
    """Each op doubles the object: 18 ops (1.3 KB) once built 500 MB; 30 would build 2 TB, too
    much to try even where the budget is broken."""
    copies = [
        {"op": "copy", "from": "/metadata", "path": f"/metadata/annotations/x{i}"}
        for i in range(ops)
    ]
    return [{"op": "add", "path": "/metadata/annotations", "value": {}}, *copies]


def _nested(depth: int) -> bytes:
    return b'{"metadata":{"name":"deep"},"x":' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"


ALIAS_BOMB = (
    b"metadata: {name: bomb}\na: &a ["
    + b'"'
    + b"x" * 40
    + b'"]\n'
    + b"".join(
        f"{c}: &{c} [{', '.join([f'*{p}'] * 10)}]\n".encode()
        for p, c in zip("abcdefg", "bcdefgh", strict=True)
    )
)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _pb_field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _pb_configmap_created_at(seconds: int) -> bytes:
    """A protobuf ConfigMap whose creationTimestamp is `seconds` after the epoch."""
    meta = _pb_field(1, b"pb-cm") + _pb_field(8, b"\x08" + _varint(seconds))
    type_meta = _pb_field(1, b"v1") + _pb_field(2, b"ConfigMap")
    return b"k8s\x00" + _pb_field(1, type_meta) + _pb_field(2, _pb_field(1, meta))


def _deep_add() -> list[dict[str, Any]]:
    """Two adds, each within the nesting limit, that nest the object past it."""
    value: list[Any] = []
    for _ in range(99):
        value = [value]
    return [
        {"op": "add", "path": "/x", "value": value},
        {"op": "add", "path": "/x" + "/0" * 99 + "/-", "value": value},
    ]


CASES = [
    # 1. JSON patch amplification and operation count.
    pytest.param(
        Seed("PATCH", CM, "fuzz-cm", _copy_bomb(18), (413, 422), JSON_PATCH), id="copy-bomb"
    ),
    pytest.param(
        Seed(
            "PATCH",
            CM,
            "fuzz-cm",
            [{"op": "test", "path": "/kind", "value": "ConfigMap"}] * 10_001,
            (413,),
            JSON_PATCH,
        ),
        id="json-patch-10001-ops",
    ),
    pytest.param(
        Seed(
            "PATCH",
            CM,
            "fuzz-cm",
            [
                {
                    "op": "add",
                    "path": "/data/big",
                    "value": "x" * (limits.MAX_OBJECT_BYTES // 2 + 1),
                },
                {"op": "copy", "from": "/data/big", "path": "/data/again"},
            ],
            (413,),
            JSON_PATCH,
        ),
        id="json-patch-intermediate-too-large",
    ),
    # 2. YAML aliases and values JSON cannot hold.
    pytest.param(Seed("POST", CM, "", ALIAS_BOMB, (413,), YAML), id="yaml-alias-bomb"),
    pytest.param(
        Seed("POST", CM, "", b"metadata: {name: self}\na: &a [*a]\n", (400,), YAML),
        id="yaml-self-alias",
    ),
    pytest.param(
        Seed("POST", CM, "", b"metadata: {name: bin}\nx: !!binary aGk=\n", (400,), YAML),
        id="yaml-binary",
    ),
    pytest.param(
        Seed("POST", CM, "", b"metadata: {name: set}\nx: !!set {a, b}\n", (400,), YAML),
        id="yaml-set",
    ),
    pytest.param(
        Seed("POST", CM, "", b"metadata: {name: nullkey}\ndata: {~: a}\n", (400,), YAML),
        id="yaml-null-key",
    ),
    pytest.param(
        Seed("POST", CM, "", b"metadata: {name: inf}\nx: .inf\n", (400,), YAML), id="yaml-infinity"
    ),
    pytest.param(
        Seed("POST", CM, "", b"metadata: {name: intkey}\ndata: {1: a, true: b}\n", (201,), YAML),
        id="yaml-int-and-bool-keys",
    ),
    pytest.param(
        Seed(
            "POST",
            CM,
            "",
            b"metadata: {name: bigint}\nx: 123456789012345678901234567890\n",
            (201,),
            YAML,
        ),
        id="yaml-bigint",
    ),
    pytest.param(
        Seed(
            "POST",
            CM,
            "",
            b"metadata: {name: ts, labels: {d: 2001-12-14}}\nx: 2001-12-14t21:59:43.10-05:00\n",
            (201,),
            YAML,
        ),
        id="yaml-timestamps-stay-strings",
    ),
    # 3. One nesting limit, one 400, whatever the encoding.
    pytest.param(Seed("POST", CM, "", _nested(limits.MAX_DEPTH), (201,)), id="json-depth-at-limit"),
    pytest.param(
        Seed("POST", CM, "", _nested(limits.MAX_DEPTH + 1), (400,)), id="json-depth-over-limit"
    ),
    pytest.param(Seed("POST", CM, "", _nested(300), (400,)), id="json-depth-300"),
    pytest.param(Seed("POST", CM, "", _nested(2000), (400,)), id="json-depth-2000"),
    pytest.param(Seed("POST", CM, "", _nested(300), (400,), YAML), id="yaml-depth-300"),
    pytest.param(Seed("POST", CM, "", _nested(2000), (400,), YAML), id="yaml-depth-2000"),
    pytest.param(
        Seed("PATCH", CM, "fuzz-cm", _deep_add(), (400,), JSON_PATCH),
        id="json-patch-nests-too-deep",
    ),
    # 4. Inputs that reached a traceback.
    pytest.param(
        Seed("PATCH", CM, "fuzz-cm", {"metadata": 5}, (400,), MERGE), id="merge-metadata-not-object"
    ),
    pytest.param(
        Seed("PATCH", CM, "fuzz-cm", {"metadata": 5}, (400,), STRATEGIC),
        id="strategic-metadata-not-object",
    ),
    pytest.param(
        Seed("PATCH", CM, "fuzz-cm", {"metadata": [1]}, (400,), APPLY, query="fieldManager=f"),
        id="apply-metadata-not-object",
    ),
    pytest.param(
        Seed("PATCH", CM, "fuzz-cm", {"metadata": {"managedFields": 5}}, (422,), MERGE),
        id="managed-fields-not-list",
    ),
    pytest.param(
        Seed(
            "PATCH",
            CM,
            "fuzz-cm",
            {
                "metadata": {
                    "managedFields": [
                        {
                            "manager": "m",
                            "operation": "Apply",
                            "fieldsV1": {"f:data": {"k:notjson": {}}},
                        }
                    ]
                }
            },
            (422,),
            MERGE,
        ),
        id="managed-fields-unreadable",
    ),
    pytest.param(
        Seed(
            "PATCH",
            CM,
            "fuzz-cm",
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "fuzz-cm"},
                "data": {"q": "1"},
            },
            (200,),
            APPLY,
            query="fieldManager=later",
        ),
        id="apply-after-rejected-managed-fields",
    ),
    pytest.param(
        Seed(
            "POST",
            kinds.PODS,
            "fuzz-pod",
            {"metadata": {"name": "fuzz-pod"}, "target": 5},
            (422,),
            subresource="binding",
        ),
        id="binding-target-not-object",
    ),
    pytest.param(
        Seed(
            "POST",
            kinds.PODS,
            "fuzz-pod",
            {"metadata": {"name": "fuzz-pod"}, "target": {"name": ["n"]}},
            (422,),
            subresource="binding",
        ),
        id="binding-target-name-not-string",
    ),
    pytest.param(
        Seed(
            "PUT",
            kinds.NAMESPACES,
            "fuzz",
            {"metadata": {"name": "fuzz"}, "spec": 5},
            (422,),
            subresource="finalize",
        ),
        id="finalize-spec-not-object",
    ),
    pytest.param(
        Seed(
            "POST",
            CM,
            "",
            _pb_configmap_created_at(2**40),
            (400,),
            "application/vnd.kubernetes.protobuf",
        ),
        id="protobuf-timestamp-out-of-range",
    ),
    pytest.param(
        Seed("GET", CM, "", None, (400,), query="resourceVersion=²"),
        id="list-resource-version-superscript",
    ),
    pytest.param(
        Seed("GET", CM, "fuzz-cm", None, (400,), query="resourceVersion=²"),
        id="get-resource-version-superscript",
    ),
    pytest.param(
        Seed("GET", CM, "", None, (400,), query="watch=1&resourceVersion=²"),
        id="watch-resource-version-superscript",
    ),
    pytest.param(Seed("GET", CM, "", None, (400,), query="limit=٣"), id="limit-arabic-digit"),
    pytest.param(Seed("GET", CM, "", None, (400,), query="limit=" + "9" * 5000), id="limit-huge"),
    pytest.param(
        Seed(
            "POST",
            kinds.NODES,
            "",
            {
                "metadata": {"name": "n1"},
                "spec": {"taints": [{"key": ["x"], "effect": "NoSchedule"}]},
            },
            (422,),
        ),
        id="node-taint-key-list",
    ),
    pytest.param(
        Seed(
            "PUT",
            kinds.POD_SCHEDULING_CONTEXTS,
            "fuzz-pod",
            {"metadata": {"name": "fuzz-pod"}, "status": {"resourceClaims": [{"name": ["gpu"]}]}},
            (422,),
            subresource="status",
        ),
        id="psc-claim-name-list",
    ),
    pytest.param(
        Seed(
            "PATCH",
            kinds.PODS,
            "fuzz-pod",
            {"status": {"conditions": [{"type": ["Ready"]}]}},
            (422,),
            MERGE,
            subresource="status",
        ),
        id="pod-condition-type-list",
    ),
    pytest.param(
        Seed(
            "POST",
            kinds.PODS,
            "",
            {
                "metadata": {"name": "p5"},
                "spec": {"containers": [{"name": "a", "image": "b"}]},
                "status": 5,
            },
            (422,),
        ),
        id="pod-created-with-status-5",
    ),
    pytest.param(
        Seed(
            "POST",
            CM,
            "",
            b'{"metadata":{"name":"gz"}}',
            (400,),
            headers={"Content-Encoding": "gzip"},
        ),
        id="gzip-header-body-not-gzip",
    ),
    pytest.param(
        Seed(
            "POST",
            CM,
            "",
            gzip.compress(b'{"metadata":{"name":"gz"}}'),
            (201,),
            headers={"Content-Encoding": "gzip"},
        ),
        id="gzip-body",
    ),
    # 5. Garbage status that broke every reader.
    pytest.param(
        Seed(
            "PATCH",
            kinds.NODES,
            "fuzz-node",
            {"status": {"conditions": ["x"]}},
            (400, 422),
            STRATEGIC,
            subresource="status",
        ),
        id="node-status-conditions-strings",
    ),
    pytest.param(
        Seed("GET", kinds.NODES, "", None, (200,), headers={"Accept": TABLE}), id="nodes-table"
    ),
    pytest.param(
        Seed(
            "POST",
            kinds.EVENTS,
            "",
            {
                "metadata": {"name": "e"},
                "involvedObject": {"kind": "Pod", "name": "p", "namespace": "fuzz"},
                "count": "x",
            },
            (422,),
        ),
        id="event-count-string",
    ),
    pytest.param(
        Seed(
            "PATCH",
            kinds.PODS,
            "fuzz-pod",
            {"status": {"containerStatuses": [5]}},
            (422,),
            MERGE,
            subresource="status",
        ),
        id="pod-container-status-number",
    ),
    pytest.param(
        Seed("GET", kinds.EVENTS, "", None, (200,), headers={"Accept": TABLE}), id="events-table"
    ),
    pytest.param(
        Seed("GET", kinds.PODS, "", None, (200,), headers={"Accept": TABLE}), id="pods-table"
    ),
]


@pytest.mark.parametrize("case", CASES)
async def test_seed_request(hostile: Hostile, case: Seed) -> None:
    path = hostile.path(case.rt, case.name, case.subresource)
    if case.query:
        path += "?" + case.query
    headers = dict(case.headers)
    if case.body is not None:
        headers.setdefault("Content-Type", case.content_type)
    response = await hostile.check(case.method, path, body=case.body, headers=headers)
    assert response.status in case.codes, response
    if response.status >= 400:
        assert (
            response.body.get("kind") == "Status" and response.body.get("code") == response.status
        )


@pytest.mark.parametrize(
    "patch_type", [pytest.param(MERGE, id="merge"), pytest.param(STRATEGIC, id="strategic")]
)
async def test_patch_result_larger_than_limit(hostile: Hostile, patch_type: str) -> None:
    """A body within 3 MiB merged into an object within 3 MiB must still fit 3 MiB (the size
    is checked before any validation rule bounds the fields)."""
    half = "x" * (limits.MAX_OBJECT_BYTES // 2 + 1)
    name = f"big-{patch_type.split('/')[1][:5]}"
    created = await hostile.check(
        "POST",
        hostile.path(kinds.LEASES, ""),
        body={"metadata": {"name": name}, "spec": {"holderIdentity": half}},
        headers={"Content-Type": "application/json"},
    )
    assert created.status == 201
    response = await hostile.check(
        "PATCH",
        hostile.path(kinds.LEASES, name),
        body={"metadata": {"annotations": {"b": half}}},
        headers={"Content-Type": patch_type},
    )
    assert response.status == 413, response
    stored = await hostile.send("GET", hostile.path(kinds.LEASES, name))
    assert stored.body["spec"]["holderIdentity"] == half
    assert "annotations" not in stored.body["metadata"]
