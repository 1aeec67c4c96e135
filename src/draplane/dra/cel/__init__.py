"""CEL for DRA device selectors (k8s.io/dynamic-resource-allocation/cel) on cel-expr-python."""

from draplane.dra.cel.cache import CELCompileError, SelectorCache
from draplane.dra.cel.compile import (
    ERR_COST_LIMIT,
    SELECTOR_MAX_COST,
    CELRuntimeError,
    CompilationResult,
    Compiler,
    DeviceInput,
    estimate_cost,
    split_qualified_name,
)

__all__ = [
    "ERR_COST_LIMIT",
    "SELECTOR_MAX_COST",
    "CELCompileError",
    "CELRuntimeError",
    "CompilationResult",
    "Compiler",
    "DeviceInput",
    "SelectorCache",
    "estimate_cost",
    "split_qualified_name",
]
