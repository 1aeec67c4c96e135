"""The object bounds (api/limits.py) and how JSON patches keep to them at every step."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from draplane.api import errors, kinds, limits
from draplane.api.patch import apply_json_patch, patch_object
from draplane.api.schema import schemas_for


def _nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("value", "code"),
    [
        pytest.param(_nested(limits.MAX_DEPTH), None, id="at-depth-limit"),
        pytest.param(_nested(limits.MAX_DEPTH + 1), 400, id="over-depth-limit"),
        pytest.param({"a": _nested(limits.MAX_DEPTH)}, 400, id="object-adds-a-level"),
        pytest.param({1: "a"}, 400, id="non-string-key"),
        pytest.param({"a": 2**64}, 400, id="integer-beyond-64-bits"),
        pytest.param({"a": b"x"}, 400, id="bytes"),
        pytest.param({"a": {"x"}}, 400, id="set"),
        pytest.param("x" * limits.MAX_OBJECT_BYTES, 413, id="over-size-limit"),
    ],
)
def test_check_object(value: Any, code: int | None) -> None:
    if code is None:
        assert limits.check_object(value) == 2 * limits.MAX_DEPTH
        return
    with pytest.raises(errors.StatusError) as err:
        limits.check_object(value)
    assert err.value.code == code


def test_encoded_size_is_compact_json_length() -> None:
    assert limits.encoded_size({"a": [1, "b"]}) == len('{"a":[1,"b"]}')


BIG = "x" * (limits.MAX_OBJECT_BYTES // 2 + 10)
CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "1"}}


@dataclass(frozen=True)
class Case:
    ops: list[dict[str, Any]]
    code: int | None
    message: str = ""


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            Case(
                [
                    {"op": "add", "path": "/data/big", "value": BIG},
                    {"op": "copy", "from": "/data/big", "path": "/data/again"},
                ],
                413,
                "the object being patched",
            ),
            id="intermediate-over-limit",
        ),
        pytest.param(
            Case(
                [
                    {"op": "add", "path": "/data/big", "value": BIG},
                    {"op": "move", "from": "/data/big", "path": "/data/m0"},
                    {"op": "replace", "path": "/data/m0", "value": BIG},
                ],
                None,
            ),
            id="move-and-replace-count-once",
        ),
        pytest.param(
            Case(
                [
                    {"op": "add", "path": "/data/big", "value": "x" * 1_000_000},
                    *[
                        op
                        for _ in range(4)
                        for op in (
                            {"op": "copy", "from": "/data/big", "path": "/data/tmp"},
                            {"op": "remove", "path": "/data/tmp"},
                        )
                    ],
                ],
                422,
                "the accumulated size increase of copy is 4000",
            ),
            id="copies-add-up-though-removed",
        ),
        pytest.param(
            Case([{"op": "test", "path": "/kind", "value": "ConfigMap"}] * 10_001, 413),
            id="too-many-operations",
        ),
    ],
)
def test_json_patch_budget(case: Case) -> None:
    if case.code is None:
        patched = apply_json_patch(CM, case.ops)
        assert limits.encoded_size(patched) <= limits.MAX_OBJECT_BYTES
        return
    with pytest.raises(errors.StatusError) as err:
        apply_json_patch(CM, case.ops)
    assert err.value.code == case.code
    assert case.message in err.value.message


@pytest.mark.parametrize(
    "content_type",
    ["application/merge-patch+json", "application/strategic-merge-patch+json"],
)
def test_patched_object_over_limit_is_413(content_type: str) -> None:
    live = {**CM, "x": BIG}
    with pytest.raises(errors.StatusError) as err:
        patch_object(live, {"y": BIG}, content_type, kinds.CONFIGMAPS, schemas_for())
    assert err.value.code == 413
