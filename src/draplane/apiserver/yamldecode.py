"""YAML request bodies read the way kube-apiserver's sigs.k8s.io/yaml reads them, within bounds.

- Aliases are expanded within `limits.MAX_OBJECT_BYTES`: the node graph is measured (each shared
  node once) before anything is built, so a few hundred bytes of nested aliases is a 413, not
  gigabytes; an anchor whose value contains itself is a 400.
- Integer, boolean and float keys become strings as sigs.k8s.io/yaml converts them; null and
  collection keys are a 400. Timestamps stay strings (yaml.v2 does not resolve them for
  untyped values). Integers beyond 64 bits become floats, as JSON numbers do; `.inf`, `.nan`,
  `!!binary` and `!!set` are values JSON cannot hold: 400.
- The result is plain JSON data, with no node shared between two places.
"""

from __future__ import annotations

import math
import struct
from typing import Any

import orjson
import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from draplane.api import errors, limits

_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_INT64_MIN, _UINT64_MAX = -(2**63), 2**64 - 1


class _Unsupported(yaml.YAMLError):
    pass


def _expanded_size(root: Node) -> int:
    """The JSON size the node graph stands for once aliases are expanded, bounded: raises
    413 past `MAX_OBJECT_BYTES` and 400 for a node that contains itself."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            size = _own_size(node, sizes)
            if size > limits.MAX_OBJECT_BYTES:
                raise limits.too_large("the YAML body with its aliases expanded")
            sizes[key] = size
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise errors.bad_request(
                "couldn't decode YAML body: an anchor's value contains an alias to itself"
            )
        on_path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)
    return sizes[id(root)]


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _own_size(node: Node, sizes: dict[int, int]) -> int:
    if isinstance(node, ScalarNode):
        return len(node.value) + 2
    return 2 + sum(sizes[id(child)] + 1 for child in _children(node))


def _go_float32(value: float) -> str:
    """strconv.FormatFloat(value, 'g', -1, 32), as sigs.k8s.io/yaml formats a float key."""
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    single = struct.unpack("f", struct.pack("f", value))[0]
    text = ""
    for precision in range(9):
        text = f"{single:.{precision}e}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == single:
            break
    sign, text = ("-", text[1:]) if text.startswith("-") else ("", text)
    mantissa, _, exp_text = text.partition("e")
    digits, exponent = mantissa.replace(".", ""), int(exp_text)
    if exponent < -4 or exponent >= 6:
        fraction = "." + digits[1:] if len(digits) > 1 else ""
        return f"{sign}{digits[0]}{fraction}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    point = exponent + 1
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return _go_float32(key)
    raise _Unsupported(f"unsupported map key of type {type(key).__name__}: {key!r}")


class _Loader(_BASE):  # type: ignore[misc]
    def get_single_data(self) -> Any:
        node = self.get_single_node()
        if node is None:
            return None
        _expanded_size(node)
        return self.construct_document(node)

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[str, Any]:
        # Keys become strings before they meet in a dict (in Python, `1` and `true` collide).
        self.flatten_mapping(node)
        mapping: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = _key(self.construct_object(key_node, deep=deep))
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping

    def construct_yaml_int(self, node: ScalarNode) -> int | float:
        value: int = super().construct_yaml_int(node)
        if _INT64_MIN <= value <= _UINT64_MAX:
            return value
        try:
            return float(value)
        except OverflowError:
            raise _Unsupported(f"integer {node.value} is out of range") from None

    def construct_yaml_float(self, node: ScalarNode) -> float:
        value: float = super().construct_yaml_float(node)
        if math.isinf(value) or math.isnan(value):
            raise _Unsupported(f"{node.value} is not a JSON number")
        return value

    def construct_timestamp_as_string(self, node: ScalarNode) -> str:
        return str(self.construct_scalar(node))

    def construct_unsupported(self, node: Node) -> Any:
        raise _Unsupported(f"values tagged {node.tag} cannot be represented in JSON")


_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_yaml_int)
_Loader.add_constructor("tag:yaml.org,2002:float", _Loader.construct_yaml_float)
_Loader.add_constructor("tag:yaml.org,2002:timestamp", _Loader.construct_timestamp_as_string)
for _tag in ("binary", "set", "omap", "pairs"):
    _Loader.add_constructor(f"tag:yaml.org,2002:{_tag}", _Loader.construct_unsupported)


_MERGE = "tag:yaml.org,2002:merge"


def _repeated_paths(node: Node, path: str, out: list[str]) -> None:
    """Keys a mapping gives twice itself (overriding a `<<` merge is not repeating)."""
    if isinstance(node, MappingNode):
        prefix = f"{path}." if path else ""
        seen: set[str] = set()
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode) or key_node.tag == _MERGE:
                continue
            key = key_node.value
            if key in seen and prefix + key not in out:
                out.append(prefix + key)
            seen.add(key)
            _repeated_paths(value_node, prefix + key, out)
    elif isinstance(node, SequenceNode):
        for i, item in enumerate(node.value):
            _repeated_paths(item, f"{path}[{i}]", out)


def repeated_keys(body: bytes) -> tuple[str, ...]:
    """The paths of the keys a YAML document repeats in one mapping (`spec.a`); () when it
    does not parse (the decoding step reports that)."""
    loader = _Loader(body)
    try:
        node = loader.get_single_node()
        if node is None:
            return ()
        _expanded_size(node)  # bounds the walk as it bounds decoding
    except (yaml.YAMLError, RecursionError, errors.StatusError):
        return ()
    finally:
        loader.dispose()
    out: list[str] = []
    _repeated_paths(node, "", out)
    return tuple(out)


def load(body: bytes) -> Any:
    """The JSON value a YAML document stands for; Status errors as the module docstring says."""
    try:
        value = yaml.load(body, Loader=_Loader)
    except (yaml.YAMLError, RecursionError) as err:
        if "maximum nesting depth" in str(err) or isinstance(err, RecursionError):
            raise limits.too_deep() from None
        raise errors.bad_request(f"couldn't decode YAML body: {err}") from None
    limits.check_object(value, "the YAML body with its aliases expanded")
    # One encoding round trip unshares aliased nodes and leaves only JSON types.
    return orjson.loads(orjson.dumps(value))
