"""Objects and helpers the structured allocator's case tables share (drivers, classes, slices,
partitions, constraints, taints, consumable capacity)."""

from __future__ import annotations

from draplane.testing.structured import (
    device_result,
    make_device,
    make_device_class,
    make_resource_slice,
    make_structured_claim,
)

A = "driver-a.example.com"
B = "driver-b.example.com"
CLASS_A = make_device_class("class-a", A).obj()
CLASS_B = make_device_class("class-b", B).obj()
NOTHING = make_device_class("nothing", "no-such-driver.example.com").obj()


def res(request: str, device: str, pool: str = "pool-1", driver: str = A, **extra: object):  # type: ignore[no-untyped-def]
    return device_result(request, device, driver, pool, **extra)


def node_slice(*devices: object, name: str = "slice-1", pool: str = "pool-1", count: int = 1):  # type: ignore[no-untyped-def]
    b = make_resource_slice(name, A, pool).node("node-1").slice_count(count)
    return b.device(*devices).obj()  # type: ignore[arg-type]


def counters(name: str = "slice-c", pool: str = "pool-1", count: int = 2, **values: str):  # type: ignore[no-untyped-def]
    return (
        make_resource_slice(name, A, pool)
        .node("node-1")
        .slice_count(count)
        .shared_counters("counter-set-1", **values)
        .obj()
    )


def part(name: str, memory: str, **extra: str):  # type: ignore[no-untyped-def]
    return (
        make_device(name)
        .capacity("memory", memory)
        .consumes("counter-set-1", memory=memory, **extra)
    )


def at_least(q: str) -> str:
    return f'device.capacity["{A}"].memory.compareTo(quantity("{q}")) >= 0'


def two(*constraint: str, kind: str = "match", devices: tuple[object, ...] = ()):  # type: ignore[no-untyped-def]
    b = make_structured_claim("claim-0").request("req-0", "class-a").request("req-1", "class-a")
    if kind == "match":
        b.match_attribute(*constraint)
    else:
        b.distinct_attribute(*constraint)
    return b.obj()


def attrs(name: str, **values: object):  # type: ignore[no-untyped-def]
    d = make_device(name)
    for k, v in values.items():
        if k == "driverVersion":
            d.version_attr(k, str(v))
        else:
            d.attr(k, v)  # type: ignore[arg-type]
    return d


EVERYTHING = [f"{A}/{n}" for n in ("numa", "driverVersion", "stringAttribute", "boolAttribute")]
FULL = dict(numa=1, driverVersion="1.0.0", stringAttribute="s", boolAttribute=True)
NO_SCHEDULE = make_device("device-1").taint("taint-key", "NoSchedule", "taint-value")
TOL_EXISTS = {"key": "taint-key", "operator": "Exists", "effect": "NoSchedule"}
TOL_OTHER_KEY = {"key": "key1", "operator": "Exists", "effect": "NoSchedule"}
SHARED = (
    make_device("device-1")
    .allow_multiple_allocations()
    .capacity("memory", "10Gi", {"default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}})
)
CLASS_CONFIG = make_device_class("class-a", A).config(A, {"a": "class"}).obj()


def opaque(params: dict[str, str], driver: str = A) -> dict[str, object]:
    return {"opaque": {"driver": driver, "parameters": params}}
