"""The `draplane whatif` report: pods that would run, per-pool utilisation before (the cluster
as it is) and after (the fork, changed and scheduled), pods still pending with their explain
reasons; as a JSON document, Markdown, and a PNG bar chart of device utilisation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
from matplotlib import pyplot as plt

from draplane.api import meta
from draplane.api.kinds import PODS
from draplane.explain import Snapshot
from draplane.whatif.simulate import Outcome
from draplane.whatif.usage import pool_usage, totals

MAX_LISTED = 50
"""Pods listed by name in the Markdown report (JSON lists all)."""
MAX_CHART_POOLS = 30
"""More pools than this are charted per driver."""


def _reason(r: dict[str, Any]) -> str:
    where = f"claim {r['claim']}" if r.get("claim") else ""
    if r.get("request"):
        where += f" request {r['request']}"
    return f"[{r['code']}] " + (f"{where}: " if where else "") + str(r["summary"])


def _reasons(report_json: dict[str, Any]) -> list[str]:
    """One line per reason: the pod's own, then each group of nodes failing alike."""
    out = [_reason(r) for r in report_json["podReasons"]]
    for group in report_json["nodeGroups"]:
        out += [f"{group['count']} node(s): {_reason(r)}" for r in group["reasons"]]
    return out


def whatif_json(original: Snapshot, changes: list[str], outcome: Outcome) -> dict[str, Any]:
    """The report as a JSON document."""
    was_bound = {meta.namespaced_key(p) for p in original.kind(PODS).values() if meta.node_name(p)}
    would_run = [
        {"pod": meta.namespaced_key(p), "node": meta.node_name(p)}
        for _, p in sorted(outcome.state.kind(PODS).items())
        if meta.node_name(p) and meta.namespaced_key(p) not in was_bound
    ]
    before, after = pool_usage(original), pool_usage(outcome.state)
    pools = []
    for key in sorted(set(before) | set(after)):
        b, a = before.get(key), after.get(key)
        pools.append(
            {
                "driver": key[0],
                "pool": key[1],
                "before": b.json() if b else None,
                "after": a.json() if a else None,
            }
        )
    (dev_b, alloc_b), (dev_a, alloc_a) = totals(before), totals(after)
    return {
        "changes": changes,
        "settled": outcome.settled,
        "seconds": round(outcome.seconds, 2),
        "wouldRun": would_run,
        "pendingCount": outcome.pending_count,
        "pending": [
            {"pod": r.pod, "reasons": _reasons(r.json()), "alike": outcome.alike.get(r.pod, [])}
            for r in outcome.pending
        ],
        "totals": {
            "before": {"devices": dev_b, "allocated": alloc_b},
            "after": {"devices": dev_a, "allocated": alloc_a},
        },
        "pools": pools,
    }


def _usage_cell(u: dict[str, Any] | None) -> str:
    if u is None:
        return "-"
    text = f"{u['allocated']}/{u['devices']}"
    counters = [f"{n} {c['consumed']}/{c['capacity']}" for n, c in u["counters"].items()]
    return text + (" (" + ", ".join(counters) + ")" if counters else "")


def render_markdown(doc: dict[str, Any]) -> str:
    lines = ["# draplane whatif", ""]
    lines += [f"- {c}" for c in doc["changes"]] or ["- no changes (schedule what is pending)"]
    t = doc["totals"]
    lines += [
        "",
        f"Scheduled on a fork in {doc['seconds']} s"
        + ("" if doc["settled"] else " (timed out before every pod was tried)")
        + f": {len(doc['wouldRun'])} pod(s) would run, {doc['pendingCount']} still pending;"
        f" devices allocated {t['before']['allocated']}/{t['before']['devices']} before,"
        f" {t['after']['allocated']}/{t['after']['devices']} after.",
        "",
        "## Pods that would run",
        "",
    ]
    would_run = doc["wouldRun"]
    lines += [f"- {r['pod']} on {r['node']}" for r in would_run[:MAX_LISTED]] or ["(none)"]
    if len(would_run) > MAX_LISTED:
        lines.append(f"- and {len(would_run) - MAX_LISTED} more")
    lines += ["", "## Utilisation per pool (allocated/devices, counters consumed/capacity)", ""]
    lines += ["| driver | pool | before | after |", "|---|---|---|---|"]
    for p in doc["pools"]:
        before, after = _usage_cell(p["before"]), _usage_cell(p["after"])
        lines.append(f"| {p['driver']} | {p['pool']} | {before} | {after} |")
    lines += ["", "## Still pending", ""]
    if not doc["pending"]:
        lines.append("(none)")
    explained = 0
    for entry in doc["pending"]:
        alike = entry["alike"]
        explained += 1 + len(alike)
        more = f" and {len(alike)} pod(s) alike ({', '.join(alike[:3])}" if alike else ""
        more += ", ...)" if len(alike) > 3 else ")" if alike else ""
        lines.append(f"- {entry['pod']}{more}")
        lines += [f"  - {r}" for r in entry["reasons"]]
    more = doc["pendingCount"] - explained
    if more > 0:
        lines.append(f"- and {more} more")
    return "\n".join(lines) + "\n"


def render(doc: dict[str, Any], output: str) -> str:
    if output == "json":
        return json.dumps(doc, indent=2) + "\n"
    return render_markdown(doc)


def _chart_rows(doc: dict[str, Any]) -> list[tuple[str, float, float]]:
    """(label, before fraction, after fraction) per pool, or per driver when there are many."""
    groups: dict[str, list[int]] = {}
    per_driver = len(doc["pools"]) > MAX_CHART_POOLS
    for p in doc["pools"]:
        label = p["driver"] if per_driver else f"{p['driver']}/{p['pool']}"
        g = groups.setdefault(label, [0, 0, 0, 0])
        for i, side in ((0, "before"), (2, "after")):
            if p[side]:
                g[i] += p[side]["allocated"]
                g[i + 1] += p[side]["devices"]
    return [
        (label, a / b if b else 0.0, c / d if d else 0.0)
        for label, (a, b, c, d) in sorted(groups.items())
    ]


def write_chart(path: Path, doc: dict[str, Any]) -> None:
    """Device utilisation per pool (or driver), before and after, as a PNG."""
    rows = _chart_rows(doc)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.5 * len(rows) + 2), 4.5))
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r[1] * 100 for r in rows], 0.4, label="before")
    ax.bar([x + 0.2 for x in xs], [r[2] * 100 for r in rows], 0.4, label="after")
    ax.set_xticks(list(xs), [r[0] for r in rows], rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("devices allocated (%)")
    ax.set_ylim(0, 105)
    ax.set_title("draplane whatif: device utilisation")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
