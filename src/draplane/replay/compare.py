"""`draplane replay --compare A B`: the differences between two replays as a Markdown table
(settings, time to schedule, pending pods, final utilisation, pods bound in one only, pools
whose allocation differs) and an optional PNG of pending pods over time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
from matplotlib import pyplot as plt

from draplane.replay.run import ReplayResult

SUMMARY_ROWS = (
    ("pods seen", "pods"),
    ("pods bound at the end", "bound"),
    ("mean time to schedule (s)", "meanTimeToSchedule"),
    ("p50 time to schedule (s)", "p50TimeToSchedule"),
    ("p95 time to schedule (s)", "p95TimeToSchedule"),
    ("max time to schedule (s)", "maxTimeToSchedule"),
    ("max pods pending", "maxPending"),
    ("pods pending at the end", "finalPending"),
    ("devices allocated", "devicesAllocated"),
)


def _diff(a: Any, b: Any) -> str:
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool):
        d = b - a
        return "" if d == 0 else f"{d:+.3f}".rstrip("0").rstrip(".")
    return "" if a == b else "differs"


def _more(x: dict[str, int], y: dict[str, int]) -> list[str]:
    """Pods (`name`, or `generateName* xN`) bound more often in `x` than in `y`."""
    out = []
    for name in sorted(x):
        extra = x[name] - y.get(name, 0)
        if extra > 0:
            out.append(name if not name.endswith("*") else f"{name} x{extra}")
    return out


def compare_json(a: ReplayResult, b: ReplayResult) -> dict[str, Any]:
    sa, sb = a.summary(), b.summary()
    pools = {
        pool: (a.pools.get(pool, {}).get("allocated"), b.pools.get(pool, {}).get("allocated"))
        for pool in sorted(set(a.pools) | set(b.pools))
    }
    return {
        "settings": {"A": a.settings, "B": b.settings},
        "summary": {key: {"A": sa[key], "B": sb[key]} for _, key in SUMMARY_ROWS},
        "boundOnlyInA": _more(a.bound_pods, b.bound_pods),
        "boundOnlyInB": _more(b.bound_pods, a.bound_pods),
        "poolsDiffering": {p: {"A": x, "B": y} for p, (x, y) in pools.items() if x != y},
        "same": a.bound_pods == b.bound_pods and all(x == y for x, y in pools.values()),
    }


def render_table(doc: dict[str, Any]) -> str:
    settings = doc["settings"]
    lines = ["| | A | B | B - A |", "|---|---|---|---|"]
    for name in sorted(set(settings["A"]) | set(settings["B"])):
        x, y = settings["A"].get(name), settings["B"].get(name)
        lines.append(f"| setting {name} | {x} | {y} | {_diff(x, y) if x != y else ''} |")
    for label, key in SUMMARY_ROWS:
        x, y = doc["summary"][key]["A"], doc["summary"][key]["B"]
        lines.append(f"| {label} | {x} | {y} | {_diff(x, y)} |")
    for pool, v in doc["poolsDiffering"].items():
        lines.append(f"| allocated in {pool} | {v['A']} | {v['B']} | {_diff(v['A'], v['B'])} |")
    for side in ("A", "B"):
        only = doc[f"boundOnlyIn{side}"]
        if only:
            lines.append(f"\nBound only in {side}: " + ", ".join(only))
    lines.append(
        "\nSame final allocation (pods bound, devices per pool)."
        if doc["same"]
        else "\nThe final allocations differ."
    )
    return "\n".join(lines) + "\n"


def write_compare_chart(path: Path, a: ReplayResult, b: ReplayResult | None = None) -> None:
    """Pods pending over (recording) time, one line per replay (`b` None: one replay)."""
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, result in (("A", a), ("B", b)) if b is not None else (("replay", a),):
        xs = [t for t, _ in result.pending]
        ys = [n for _, n in result.pending]
        settings = ", ".join(f"{k}={v}" for k, v in sorted(result.settings.items()))
        ax.step(xs, ys, where="post", label=f"{label} ({settings})")
    ax.set_xlabel("recording time (s)")
    ax.set_ylabel("pods pending")
    ax.set_title("draplane replay: pending pods over time")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
