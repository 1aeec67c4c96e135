"""The CEL environment of CRD validation rules (apiextensions-apiserver schema/cel, the
Kubernetes CEL libraries of k8s.io/apiserver/pkg/cel/library) on cel-expr-python.

`self` and `oldSelf` are declared with the CEL type of the rule's schema node (`cel_type`):
integer `int`, number `double`, boolean `bool`, string `string` (`timestamp` for the date and
date-time formats, `duration` for duration, `bytes` for byte), arrays `list(T)`, maps
(`additionalProperties`) `map(string, T)`; objects with properties are `map(string, dyn)`
(cel-expr-python declares no object types without protobuf, so `rules.py` checks field names
against the schema itself), and `x-kubernetes-int-or-string` and
`x-kubernetes-preserve-unknown-fields` nodes are `dyn`, as upstream types them. `cel_value`
converts a JSON value to what that type holds, with property names escaped as upstream's
model/escaping.go does (`foo-bar` is `self.foo__dash__bar`).

The libraries: the CEL standard macros (has, all, exists, exists_one, map, filter), strings,
bindings and optionals extensions, the Kubernetes list, quantity and semver functions of
`draplane.dra.cel.library`, plus list `indexOf`, regex `find`/`findAll` and the URL library
added here.
"""

from __future__ import annotations

import base64
import re
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings
from google.protobuf import duration_pb2, timestamp_pb2

from draplane.dra.cel.library import CELFunctionError, kubernetes_functions

URL_TAG = "__kubernetes.URL__"
_RESERVED = frozenset(
    {
        *("true", "false", "null", "in", "as", "break", "const", "continue", "else", "for"),
        *("function", "if", "import", "let", "loop", "package", "namespace", "return", "var"),
        *("void", "while"),
    }
)
_IDENT = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def escape(name: str) -> str | None:
    """The CEL name of a property (None: not accessible from CEL)."""
    if name in _RESERVED:
        return f"__{name}__"
    out = name.replace("__", "__underscores__").replace(".", "__dot__")
    out = out.replace("-", "__dash__").replace("/", "__slash__")
    return out if _IDENT.match(out) else None


def is_dyn(schema: dict[str, Any]) -> bool:
    if schema.get("x-kubernetes-int-or-string"):
        return True
    return bool(schema.get("x-kubernetes-preserve-unknown-fields")) and not schema.get("properties")


def type_key(schema: Any) -> str:
    """A CEL type signature of the schema node, e.g. `list(map(string,dyn))`."""
    if not isinstance(schema, dict) or is_dyn(schema):
        return "dyn"
    t = schema.get("type")
    if t == "object":
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict) and not schema.get("properties"):
            return f"map(string,{type_key(additional)})"
        return "map(string,dyn)"
    if t == "array":
        return f"list({type_key(schema.get('items'))})"
    if t == "string":
        fmt = schema.get("format")
        return {"date": "timestamp", "date-time": "timestamp", "duration": "duration"}.get(
            str(fmt), "bytes" if fmt == "byte" else "string"
        )
    return {"integer": "int", "number": "double", "boolean": "bool"}.get(str(t), "dyn")


_SCALARS = {
    "dyn": cel.Type.DYN,
    "int": cel.Type.INT,
    "double": cel.Type.DOUBLE,
    "bool": cel.Type.BOOL,
    "string": cel.Type.STRING,
    "bytes": cel.Type.BYTES,
    "timestamp": cel.Type.TIMESTAMP,
    "duration": cel.Type.DURATION,
}


def cel_type(key: str) -> cel.Type:
    if key.startswith("list("):
        return cel.Type.List(cel_type(key[5:-1]))
    if key.startswith("map(string,"):
        return cel.Type.Map(cel.Type.STRING, cel_type(key[11:-1]))
    return _SCALARS[key]


def _duration(text: str) -> timedelta:
    sign, body = (-1, text[1:]) if text.startswith("-") else (1, text.lstrip("+"))
    if body == "0":
        return timedelta(0)
    pos, seconds = 0, 0.0
    for m in _DURATION.finditer(body):
        if m.start() != pos:
            break
        seconds += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if not body or pos != len(body):
        raise ValueError(f"invalid duration {text!r}")
    return timedelta(seconds=sign * seconds)


def _timestamp(text: str) -> datetime:
    if len(text) == 10:
        return datetime.fromisoformat(text).replace(tzinfo=UTC)
    value = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def cel_value(schema: Any, value: Any, *, root: bool = False) -> Any:
    """`value` as the CEL type of `schema` holds it (None stays None)."""
    if value is None or not isinstance(schema, dict) or is_dyn(schema):
        return value
    t = schema.get("type")
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        if not props and isinstance(additional, dict):
            return {k: cel_value(additional, v) for k, v in value.items()}
        out: dict[str, Any] = {}
        root = root or bool(schema.get("x-kubernetes-embedded-resource"))
        for k, v in value.items():
            sub = props.get(k)
            if root and k in ("apiVersion", "kind"):
                out[k] = v
            elif root and k == "metadata" and isinstance(v, dict):
                out[k] = {m: v[m] for m in ("name", "generateName") if m in v}
            elif isinstance(sub, dict) and (name := escape(k)) is not None:
                out[name] = cel_value(sub, v)
            elif sub is None and schema.get("x-kubernetes-preserve-unknown-fields"):
                out[k] = v
        return out
    if isinstance(value, list):
        return [cel_value(schema.get("items"), v) for v in value]
    if t == "number" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if t == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    if t == "string" and isinstance(value, str):
        fmt = schema.get("format")
        try:
            # Nested values reach CEL as the protobuf well-known types.
            if fmt in ("date", "date-time"):
                ts = timestamp_pb2.Timestamp()
                ts.FromDatetime(_timestamp(value))
                return ts
            if fmt == "duration":
                d = duration_pb2.Duration()
                d.FromTimedelta(_duration(value))
                return d
            if fmt == "byte":
                return base64.b64decode(value)
        except ValueError:
            return value
    return value


# --- library additions ---------------------------------------------------------------------


@lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as e:
        raise CELFunctionError(f"invalid regex {pattern!r}: {e}") from None


def _find(s: str, pattern: str) -> str:
    m = _regex(pattern).search(s)
    return m.group(0) if m else ""


def _find_all(s: str, pattern: str, limit: int = -1) -> list[str]:
    found = [m.group(0) for m in _regex(pattern).finditer(s)]
    return found if limit < 0 else found[:limit]


def _index_of(items: Any, x: Any) -> int:
    return next((i for i, v in enumerate(items) if v == x), -1)


def _url(text: str) -> dict[str, str]:
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as e:
        raise CELFunctionError(f"URL parse error during conversion from string: {e}") from None
    if not parts.scheme and not text.startswith("/"):
        raise CELFunctionError(
            f"URL parse error during conversion from string: parse {text!r}: invalid URI for "
            "request"
        )
    return {
        URL_TAG: text,
        "scheme": parts.scheme,
        "host": parts.netloc.rpartition("@")[2],
        "hostname": parts.hostname or "",
        "port": "" if port is None else str(port),
        "path": parts.path,
        "query": parts.query,
    }


def _is_url(text: str) -> bool:
    try:
        _url(text)
    except CELFunctionError:
        return False
    return True


def _query(u: dict[str, str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for pair in filter(None, u["query"].split("&")):
        key, _, value = pair.partition("=")
        out.setdefault(key, []).append(value)
    return out


_S, _I, _B = cel.Type.STRING, cel.Type.INT, cel.Type.BOOL
_M = cel.Type.Map(cel.Type.STRING, cel.Type.DYN)
_LS = cel.Type.List(cel.Type.STRING)


def _member(name: str, ret: cel.Type, args: list[cel.Type], impl: Any) -> cel.Overload:
    oid = f"crd_{name}_" + "_".join(a.name().lower() for a in args)
    return cel.Overload(oid, ret, args, is_member=True, impl=impl)


def _url_getter(field: str) -> Any:
    return lambda u: u[field]


def crd_functions() -> list[cel.FunctionDecl]:
    """The functions the CRD environment has beyond `kubernetes_functions()`."""
    decls = [
        cel.FunctionDecl(
            "indexOf", [_member("indexOf", _I, [cel.Type.List(cel.Type.DYN)], _index_of)]
        ),
        cel.FunctionDecl("find", [_member("find", _S, [_S, _S], _find)]),
        cel.FunctionDecl(
            "findAll",
            [
                _member("findAll", _LS, [_S, _S], _find_all),
                _member("findAll", _LS, [_S, _S, _I], _find_all),
            ],
        ),
        cel.FunctionDecl("url", [cel.Overload("crd_url", _M, [_S], impl=_url)]),
        cel.FunctionDecl("isURL", [cel.Overload("crd_isURL", _B, [_S], impl=_is_url)]),
        cel.FunctionDecl(
            "getQuery",
            [_member("getQuery", cel.Type.Map(_S, _LS), [_M], _query)],
        ),
    ]
    for fn, field in (
        ("getScheme", "scheme"),
        ("getHost", "host"),
        ("getHostname", "hostname"),
        ("getPort", "port"),
        ("getEscapedPath", "path"),
    ):
        decls.append(cel.FunctionDecl(fn, [_member(fn, _S, [_M], _url_getter(field))]))
    return decls


@lru_cache(maxsize=256)
def environment(key: str) -> cel.Env:
    """The environment with `self` and `oldSelf` of the type `key` (one per type, shared)."""
    t = cel_type(key)
    return cel.NewEnv(
        variables={"self": t, "oldSelf": t},
        extensions=[
            ext_strings.ExtStrings(),
            ext_bindings.ExtBindings(),
            ext_optional.ExtOptional(),
            cel.CelExtension("kubernetes", kubernetes_functions()),
            cel.CelExtension("kubernetes.crd", crd_functions()),
        ],
    )
