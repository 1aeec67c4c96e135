"""CEL implementations on PyPI compared on typical device selectors.

`python -m draplane.bench.celcompare` measures, for each installed candidate, the compile cost
and the per-evaluation cost of three selectors (a string attribute, a quantity comparison on a
capacity, a semver comparison), and draplane's own path (`SelectorCache`, cold = first
evaluation of a pair, warm = cached). Candidates: `cel-expr-python` (the official CEL runtime,
C++), `common-expression-language` (Rust), `cel-python` (pure Python). The latter two are not
dependencies of draplane: install them into a scratch environment to include them. Times are CPU
time (time.process_time) per call.
"""

from __future__ import annotations

import functools
import importlib.util
import time
from collections.abc import Callable
from typing import Any

D = "driver.example.com"
SELECTORS = {
    "string": f'device.attributes["{D}"].model == "A100"',
    "quantity": f'device.capacity["{D}"].memory.compareTo(quantity("40Gi")) >= 0',
    "semver": f'device.attributes["{D}"].driverVersion.isGreaterThan(semver("1.2.0"))',
}
GI = 2**30


def per_call(fn: Callable[[], object], n: int) -> float:
    fn()
    start = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - start) / n * 1e6


def _plain_device() -> dict[str, Any]:
    # Quantities and versions as tagged maps, the representation the C++ and Rust bindings allow.
    return {
        "driver": D,
        "attributes": {D: {"model": "A100", "driverVersion": {"v": [1, 3, 0]}}},
        "capacity": {D: {"memory": {"q": 80 * GI}}},
    }


def _cmp(a: Any, b: Any) -> int:
    return int(a["q"] > b["q"]) - int(a["q"] < b["q"])


def _quantity(s: str) -> dict[str, int]:
    return {"q": 40 * GI}


def _semver(s: str) -> dict[str, list[int]]:
    return {"v": [int(x) for x in s.split(".")]}


def _gt(a: Any, b: Any) -> bool:
    return bool(a["v"] > b["v"])


def bench_cel_expr_python(n: int) -> dict[str, tuple[float, float]]:
    from cel_expr_python import cel

    m = cel.Type.Map(cel.Type.STRING, cel.Type.DYN)
    env = cel.NewEnv(
        variables={"device": m},
        functions=[
            cel.FunctionDecl("quantity", [cel.Overload("q", m, [cel.Type.STRING], impl=_quantity)]),
            cel.FunctionDecl(
                "compareTo", [cel.Overload("c", cel.Type.INT, [m, m], is_member=True, impl=_cmp)]
            ),
            cel.FunctionDecl("semver", [cel.Overload("s", m, [cel.Type.STRING], impl=_semver)]),
            cel.FunctionDecl(
                "isGreaterThan",
                [cel.Overload("g", cel.Type.BOOL, [m, m], is_member=True, impl=_gt)],
            ),
        ],
    )
    dev = {"device": _plain_device()}
    out = {}
    for name, expr in SELECTORS.items():
        program = env.compile(expr)
        assert program.eval(data=dev).value() is True
        out[name] = (
            per_call(functools.partial(env.compile, expr), max(n // 20, 10)),
            per_call(functools.partial(_eval_cpp, program, dev), n),
        )
    return out


def _eval_cpp(program: Any, dev: dict[str, Any]) -> object:
    return program.eval(data=dev).value()


def bench_common_expression_language(n: int) -> dict[str, tuple[float, float]]:
    import cel  # type: ignore[import-not-found]

    funcs = {"quantity": _quantity, "compareTo": _cmp, "semver": _semver, "isGreaterThan": _gt}
    dev = _plain_device()
    out = {}
    for name, expr in SELECTORS.items():
        program = cel.compile(expr)

        def run(p: Any = program) -> object:
            return p.execute(cel.Context(variables={"device": dev}, functions=funcs))

        assert run() is True
        out[name] = (
            per_call(functools.partial(cel.compile, expr), max(n // 20, 10)),
            per_call(run, n),
        )
    return out


def bench_cel_python(n: int) -> dict[str, tuple[float, float]]:
    import celpy  # type: ignore[import-not-found]
    from celpy import celtypes  # type: ignore[import-not-found]

    env = celpy.Environment()
    funcs = {
        "quantity": lambda s: celtypes.IntType(40 * GI),
        "compareTo": lambda a, b: celtypes.IntType((a > b) - (a < b)),
        "semver": lambda s: celtypes.ListType([celtypes.IntType(int(x)) for x in s.split(".")]),
        "isGreaterThan": lambda a, b: celtypes.BoolType(list(a) > list(b)),
    }
    dev = celpy.json_to_cel(
        {
            "driver": D,
            "attributes": {D: {"model": "A100", "driverVersion": [1, 3, 0]}},
            "capacity": {D: {"memory": 80 * GI}},
        }
    )
    out = {}
    for name, expr in SELECTORS.items():
        program = env.program(env.compile(expr), functions=funcs)
        assert bool(program.evaluate({"device": dev})) is True
        out[name] = (
            per_call(functools.partial(env.compile, expr), max(n // 100, 5)),
            per_call(functools.partial(program.evaluate, {"device": dev}), max(n // 20, 20)),
        )
    return out


def bench_draplane(n: int) -> dict[str, tuple[float, float, float]]:
    from draplane.dra.cel import Compiler, SelectorCache

    device = {
        "name": "gpu-0",
        "attributes": {"model": {"string": "A100"}, "driverVersion": {"version": "1.3.0"}},
        "capacity": {"memory": {"value": "80Gi"}},
    }
    out = {}
    for name, expr in SELECTORS.items():
        compiler = Compiler()
        compile_us = per_call(functools.partial(compiler.compile, expr), max(n // 20, 10))

        def cold(e: str = expr, compiler: Compiler = compiler) -> object:
            # a fresh device dict each time: conversion plus one evaluation
            return SelectorCache(compiler).matches(e, D, dict(device))

        cache = SelectorCache(compiler)
        assert cache.matches(expr, D, device) is True
        out[name] = (
            compile_us,
            per_call(cold, n),
            per_call(functools.partial(cache.matches, expr, D, device), n),
        )
    return out


CANDIDATES = {
    "cel-expr-python": ("cel_expr_python", bench_cel_expr_python),
    "common-expression-language": ("cel", bench_common_expression_language),
    "cel-python": ("celpy", bench_cel_python),
}


def main(n: int = 2000) -> None:
    print("| implementation | selector | compile (us) | evaluate (us) |")
    print("|---|---|---|---|")
    for label, (module, fn) in CANDIDATES.items():
        if importlib.util.find_spec(module) is None:
            print(f"| {label} | (not installed) | | |")
            continue
        for sel, (c, e) in fn(n).items():
            print(f"| {label} | {sel} | {c:.1f} | {e:.1f} |")
    for sel, (c, cold, warm) in bench_draplane(n).items():
        print(f"| draplane SelectorCache | {sel} | {c:.1f} | cold {cold:.1f} / cached {warm:.2f} |")


if __name__ == "__main__":
    main()
