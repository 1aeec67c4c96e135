"""The TypedDicts of `draplane.api.types` against the Go types in `draplane.api.schema`: every
key of each TypedDict is a field of the matching struct (in some served Kubernetes version) with
a compatible JSON type, nested TypedDicts match the nested structs, and every TypedDict of the
package is reached from a kind, so the two descriptions cannot drift."""

from __future__ import annotations

import inspect
import types
import typing
from typing import Any, is_typeddict

import pytest

from draplane.api import schema, types as api_types
from draplane.api.schema import model
from draplane.api.schema.podclaims import VERSION as V136
from draplane.api.types import core, meta, resource, resourcev1alpha2

VERSIONS = ("", V136)
"""The base structs and each set of overrides (`model.override`)."""

CORE = "io.k8s.api.core.v1."
META = "io.k8s.apimachinery.pkg.apis.meta.v1."
RES_V1ALPHA2 = "io.k8s.api.resource.v1alpha2."
RES_VERSIONS = ("v1", "v1beta2")
"""resource.k8s.io versions with the v1 shape (v1beta1 is converted before it is read)."""

KINDS: list[tuple[type, list[str]]] = [
    (core.Pod, [CORE + "Pod"]),
    (core.Node, [CORE + "Node"]),
    (meta.Condition, [META + "Condition"]),
    (meta.LabelSelector, [META + "LabelSelector"]),
    *(
        (td, [f"io.k8s.api.resource.{v}.{td.__name__}" for v in RES_VERSIONS])
        for td in (
            resource.DeviceClass,
            resource.ResourceClaim,
            resource.ResourceClaimTemplate,
            resource.ResourceSlice,
        )
    ),
    *(
        (td, [RES_V1ALPHA2 + td.__name__])
        for td in (
            resourcev1alpha2.ResourceClass,
            resourcev1alpha2.ResourceClaim,
            resourcev1alpha2.ResourceClaimTemplate,
            resourcev1alpha2.PodSchedulingContext,
        )
    ),
]

SCALARS: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "byte": (str,),
    "quantity": (str,),
    "time": (str,),
    "microtime": (str,),
    "int32": (int,),
    "int64": (int,),
    "boolean": (bool,),
    "double": (float,),
    "intorstring": (int, str),
}


def _fields(struct_name: str) -> dict[str, list[model.Type]]:
    """Field name -> its types in the served versions where the struct has it."""
    out: dict[str, list[model.Type]] = {}
    for version in VERSIONS:
        for fld in schema.schemas_for(version).get(struct_name).fields:
            out.setdefault(fld.name, []).append(fld.type)
    return out


def _args(hint: Any) -> tuple[Any, ...]:
    return typing.get_args(hint)


def _strip_none(hint: Any) -> Any:
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        rest = [a for a in _args(hint) if a is not type(None)]
        return rest[0] if len(rest) == 1 else typing.Union[tuple(rest)]  # noqa: UP007
    return hint


def _is_obj(hint: Any) -> bool:
    return typing.get_origin(hint) is dict and _args(hint) == (str, Any)


def _compatible(hint: Any, t: model.Type, path: str, seen: set[type], errors: list[str]) -> bool:
    hint = _strip_none(hint)
    if hint is Any:
        return True
    if isinstance(t, model.Arr):
        return typing.get_origin(hint) is list and _compatible(
            _args(hint)[0], t.item, path + "[]", seen, errors
        )
    if isinstance(t, model.Map):
        return (
            typing.get_origin(hint) is dict
            and _args(hint)[0] is str
            and _compatible(_args(hint)[1], t.value, path + "{}", seen, errors)
        )
    if model.is_struct(t):
        if _is_obj(hint):
            return True  # a subtree left unmodelled
        if is_typeddict(hint):
            _check(hint, [t], path, seen, errors)
            return True
        return False
    if t in model.FREE:
        return _is_obj(hint) if t == "object" else False
    allowed = SCALARS[t]
    parts = _args(hint) if typing.get_origin(hint) is typing.Union else (hint,)
    if isinstance(hint, types.UnionType):
        parts = _args(hint)
    return all(p in allowed for p in parts)


def _check(td: Any, struct_names: list[str], path: str, seen: set[type], errors: list[str]) -> None:
    seen.add(td)
    hints = typing.get_type_hints(td)
    for struct_name in struct_names:
        fields = _fields(struct_name)
        for key, hint in hints.items():
            where = f"{path}.{key} ({td.__name__} vs {struct_name})"
            if key not in fields:
                errors.append(f"{where}: no such field")
            elif not any(_compatible(hint, t, f"{path}.{key}", seen, errors) for t in fields[key]):
                errors.append(f"{where}: {hint} does not hold {fields[key]}")


@pytest.mark.parametrize(("td", "struct_names"), KINDS, ids=lambda v: getattr(v, "__name__", ""))
def test_every_key_is_a_field_of_the_go_type(td: Any, struct_names: list[str]) -> None:
    errors: list[str] = []
    _check(td, struct_names, td.__name__, set(), errors)
    assert errors == []


def test_every_typeddict_is_checked() -> None:
    seen: set[type] = set()
    for td, struct_names in KINDS:
        _check(td, struct_names, td.__name__, seen, [])
    defined = {
        obj
        for module in (core, meta, resource, resourcev1alpha2)
        for _, obj in inspect.getmembers(module, is_typeddict)
        if obj.__module__ == module.__name__
    }
    assert sorted(t.__name__ for t in defined - seen) == []
    assert all(getattr(api_types, name) is not None for name in api_types.__all__)


def test_a_drifted_key_is_found() -> None:
    class Drifted(typing.TypedDict, total=False):
        nodeName: int
        nodeNme: str

    errors: list[str] = []
    _check(Drifted, [CORE + "PodSpec"], "PodSpec", set(), errors)
    assert len(errors) == 2
