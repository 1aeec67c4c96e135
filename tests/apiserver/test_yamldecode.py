"""YAML bodies as sigs.k8s.io/yaml reads them, within the object bounds."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api import errors, limits
from draplane.apiserver import yamldecode


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(b"a: 1\nb: [x, y]\n", {"a": 1, "b": ["x", "y"]}, id="plain"),
        pytest.param(
            b"1: a\ntrue: b\nno: c\n", {"1": "a", "true": "b", "false": "c"}, id="int-bool-keys"
        ),
        pytest.param(
            b"1.5: a\n1.0e+6: b\n100000.0: c\n",
            {"1.5": "a", "1e+06": "b", "100000": "c"},
            id="float-keys-as-go",
        ),
        pytest.param(
            b"d: 2001-12-14\nt: 2001-12-14t21:59:43.10-05:00\n",
            {"d": "2001-12-14", "t": "2001-12-14t21:59:43.10-05:00"},
            id="timestamps-stay-strings",
        ),
        pytest.param(
            b"n: 123456789012345678901234567890\n",
            {"n": 1.2345678901234568e29},
            id="bigint-is-float",
        ),
        pytest.param(b"n: 18446744073709551615\n", {"n": 2**64 - 1}, id="uint64-kept"),
        pytest.param(b"a: &x {k: v}\nb: *x\n", {"a": {"k": "v"}, "b": {"k": "v"}}, id="alias"),
        pytest.param(
            b"base: &b {k: v}\nm:\n  <<: *b\n  j: w\n",
            {"base": {"k": "v"}, "m": {"k": "v", "j": "w"}},
            id="merge-key",
        ),
    ],
)
def test_load(body: bytes, expected: Any) -> None:
    assert yamldecode.load(body) == expected


def test_aliased_nodes_are_not_shared() -> None:
    value = yamldecode.load(b"a: &x {k: v}\nb: *x\n")
    value["a"]["k"] = "changed"
    assert value["b"] == {"k": "v"}


def _bomb(levels: int) -> bytes:
    lines = [b'l0: &l0 ["' + b"x" * 40 + b'"]']
    lines += [
        f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]".encode() for i in range(1, levels + 1)
    ]
    return b"\n".join(lines) + b"\n"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        pytest.param(_bomb(9), 413, id="alias-bomb"),
        pytest.param(b"a: &a [*a]\n", 400, id="anchor-contains-itself"),
        pytest.param(b"x: !!binary aGk=\n", 400, id="binary"),
        pytest.param(b"x: !!set {a, b}\n", 400, id="set"),
        pytest.param(b"x: !!omap [a: 1]\n", 400, id="omap"),
        pytest.param(b"x: .inf\n", 400, id="infinity"),
        pytest.param(b"x: .nan\n", 400, id="nan"),
        pytest.param(b"~: a\n", 400, id="null-key"),
        pytest.param(b"[a]: b\n", 400, id="list-key"),
        pytest.param(b"a: 1\n---\nb: 2\n", 400, id="two-documents"),
        pytest.param(
            b"x: " + b"[" * (limits.MAX_DEPTH + 1) + b"]" * (limits.MAX_DEPTH + 1),
            400,
            id="too-deep",
        ),
        pytest.param(b"x: " + b"[" * 2000 + b"]" * 2000, 400, id="deeper-than-libyaml"),
    ],
)
def test_rejected(body: bytes, code: int) -> None:
    with pytest.raises(errors.StatusError) as err:
        yamldecode.load(body)
    assert err.value.code == code
