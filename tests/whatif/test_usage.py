"""Per-pool utilisation (`pool_usage`): devices of the newest generation only, allocated ones
from claims' allocation results, shared counters' capacity and what allocated devices consume;
and the hypothetical changes a state is forked with (`changes.apply`)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from draplane.api.kinds import NODES, RESOURCE_CLAIMS_V1, RESOURCE_SLICES
from draplane.api.meta import Obj
from draplane.explain import Snapshot
from draplane.testing.builders import make_node
from draplane.testing.structured import make_device, make_resource_slice, make_structured_claim
from draplane.whatif import Changes, StateError, apply, pool_usage
from draplane.whatif.changes import TAINT_KEY

D = "gpu.example.com"


def _allocated(name: str, *devices: tuple[str, str]) -> Obj:
    results = [
        {"request": "gpu", "driver": D, "pool": pool, "device": dev} for pool, dev in devices
    ]
    claim = make_structured_claim(name).request("gpu", "gpu")
    return claim.allocation({"devices": {"results": results}}).obj()


def _state() -> Snapshot:
    parts = make_resource_slice("n1-counters", D, "n1").node("n1").slice_count(2).generation(2)
    parts.shared_counters("gpu-0", memory="80Gi")
    devices = make_resource_slice("n1-devices", D, "n1").node("n1").slice_count(2).generation(2)
    devices.device(
        make_device("mig-a").consumes("gpu-0", memory="40Gi"),
        make_device("mig-b").consumes("gpu-0", memory="40Gi"),
        make_device("whole").consumes("gpu-0", memory="80Gi"),
    )
    stale = make_resource_slice("n1-old", D, "n1").node("n1").generation(1).device("old-0")
    other = make_resource_slice("n2", D, "n2").node("n2").device("gpu-0", "gpu-1")
    return Snapshot.of(
        {
            NODES: [make_node("n1").obj(), make_node("n2").obj()],
            RESOURCE_SLICES: [parts.obj(), devices.obj(), stale.obj(), other.obj()],  # type: ignore[list-item]
            RESOURCE_CLAIMS_V1: [
                _allocated("a", ("n1", "mig-a")),
                _allocated("b", ("n2", "gpu-1")),
            ],
        }
    )


def test_pool_usage_counts_newest_devices_allocations_and_counters() -> None:
    usage = pool_usage(_state())
    assert set(usage) == {(D, "n1"), (D, "n2")}
    n1 = usage[(D, "n1")]
    assert (n1.devices, n1.allocated) == (3, 1)
    assert n1.counters == {"gpu-0/memory": [Fraction(40 * 2**30), Fraction(80 * 2**30)]}
    assert usage[(D, "n2")].json() == {"devices": 2, "allocated": 1, "counters": {}}


@pytest.mark.parametrize(
    ("changes", "pools"),
    [
        (Changes(add_nodes=2, like="n2"), {"n1": 3, "n2": 2, "n2-whatif-0": 2, "n2-whatif-1": 2}),
        (Changes(remove_pools=[f"{D}/n2"]), {"n1": 3}),
        (Changes(remove_pools=["n1"]), {"n2": 2}),
    ],
)
def test_changes_fork_nodes_and_pools(changes: Changes, pools: dict[str, int]) -> None:
    state = _state()
    forked = apply(state, changes)
    assert {p: u.devices for (_, p), u in pool_usage(forked).items()} == pools
    assert pool_usage(state)[(D, "n2")].devices == 2  # the original is not changed
    for i in range(changes.add_nodes):
        assert forked.get(NODES, f"n2-whatif-{i}") is not None


def test_taint_devices_taints_only_the_named_device() -> None:
    forked = apply(_state(), Changes(taint_devices=[f"{D}/n2/gpu-1"]))
    (slice_,) = [
        s for s in forked.kind(RESOURCE_SLICES).values() if s["spec"]["pool"]["name"] == "n2"
    ]
    taints = {d["name"]: d.get("taints") for d in slice_["spec"]["devices"]}
    assert taints == {
        "gpu-0": None,
        "gpu-1": [{"key": TAINT_KEY, "value": "true", "effect": "NoSchedule"}],
    }


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (Changes(add_nodes=1, like="nope"), "node nope not found"),
        (Changes(remove_pools=["other.example.com/n1"]), "no ResourceSlice of pool"),
        (Changes(taint_devices=[f"{D}/n2/gpu-9"]), "no device"),
        (
            Changes(manifests=[{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}]),
            "not DRA state",
        ),
    ],
)
def test_bad_changes_are_refused(changes: Changes, message: str) -> None:
    with pytest.raises(StateError, match=message):
        apply(_state(), changes)
