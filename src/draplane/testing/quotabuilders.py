"""Builders of core/v1 ResourceQuotas and LimitRanges: `make_resource_quota(name, namespace)`
with `hard(name, quantity)`, `scopes(...)`, `scope(name, operator, *values)` (a scopeSelector
requirement) and `status(hard, used)`; `make_limit_range(name, namespace)` with `limit(...)`."""

from __future__ import annotations

from typing import Self

from draplane.api.meta import Obj
from draplane.testing.basebuilder import _Builder, _uid


class ResourceQuotaBuilder(_Builder):
    def hard(self, name: str, quantity: str) -> Self:
        self._obj["spec"].setdefault("hard", {})[name] = quantity
        return self

    def scopes(self, *scopes: str) -> Self:
        self._obj["spec"]["scopes"] = list(scopes)
        return self

    def scope(self, name: str, operator: str, *values: str) -> Self:
        req: Obj = {"scopeName": name, "operator": operator}
        if values:
            req["values"] = list(values)
        selector = self._obj["spec"].setdefault("scopeSelector", {})
        selector.setdefault("matchExpressions", []).append(req)
        return self

    def status(self, hard: dict[str, str], used: dict[str, str]) -> Self:
        self._obj["status"] = {"hard": dict(hard), "used": dict(used)}
        return self


def make_resource_quota(name: str = "quota", namespace: str = "default") -> ResourceQuotaBuilder:
    return ResourceQuotaBuilder(
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": name, "namespace": namespace, "uid": _uid(name)},
            "spec": {},
        }
    )


class LimitRangeBuilder(_Builder):
    def limit(self, type_: str, **fields: dict[str, str]) -> Self:
        item: Obj = {"type": type_, **{k: dict(v) for k, v in fields.items()}}
        self._obj["spec"]["limits"].append(item)
        return self


def make_limit_range(name: str = "limits", namespace: str = "default") -> LimitRangeBuilder:
    return LimitRangeBuilder(
        {
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": {"name": name, "namespace": namespace, "uid": _uid(name)},
            "spec": {"limits": []},
        }
    )
