"""`draplane dump` and `draplane whatif`: the DRA-relevant state of a cluster read once
(read-only) or from a dump file, forked, changed hypothetically, and scheduled by the real
draplane scheduler and controllers in an in-process control plane; the report says which pods
would run, per-pool utilisation before and after, and why the others stay pending."""

from draplane.whatif.changes import Changes, apply
from draplane.whatif.report import render, whatif_json, write_chart
from draplane.whatif.seed import seed_state
from draplane.whatif.simulate import Outcome, plane_config, simulate
from draplane.whatif.state import (
    STATE_KINDS,
    StateError,
    load_objects,
    read_dump,
    read_state,
    write_dump,
)
from draplane.whatif.usage import PoolUsage, pool_usage

__all__ = [
    "STATE_KINDS",
    "Changes",
    "Outcome",
    "PoolUsage",
    "StateError",
    "apply",
    "load_objects",
    "plane_config",
    "pool_usage",
    "read_dump",
    "read_state",
    "render",
    "seed_state",
    "simulate",
    "whatif_json",
    "write_chart",
    "write_dump",
]
