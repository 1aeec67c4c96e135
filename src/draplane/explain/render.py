"""Printing a `Report`: text for people (one block per group of nodes failing alike, at most a
few node names each, then the checked fixes with their changes) and `-o json`.
"""

from __future__ import annotations

import json

from draplane.explain.report import NodeGroup, Report, Verdict

MAX_NODE_NAMES = 5


def _nodes(group: NodeGroup) -> str:
    names = group.nodes[:MAX_NODE_NAMES]
    more = len(group.nodes) - len(names)
    return ", ".join(names) + (f" and {more} more" if more > 0 else "")


def render_text(report: Report) -> str:
    lines = [f"Pod {report.pod}:"]
    if report.node_name:
        lines.append(f"  scheduled on node {report.node_name}")
        return "\n".join(lines) + "\n"
    if report.feasible:
        lines.append(
            f"  schedulable: fits {len(report.feasible)} of {report.node_count} nodes "
            f"(e.g. {report.feasible[0]}); the scheduler has not bound it yet"
        )
        return "\n".join(lines) + "\n"
    lines.append(f"  not schedulable on any of {report.node_count} nodes")
    for reason in report.pod_reasons:
        lines.append(f"  - [{reason.code}] {reason.summary}")
    for group in report.groups:
        count = len(group.nodes)
        lines.append(f"  {count} node{'s' if count != 1 else ''} ({_nodes(group)}):")
        for reason in group.reasons:
            where = ""
            if reason.claim:
                where = f"claim {reason.claim}" + (
                    f" request {reason.request}" if reason.request else ""
                )
                where += ": "
            lines.append(f"    - [{reason.code}] {where}{reason.summary}")
            if reason.detail:
                prefix = f"{group.nodes[0]}: " if count > 1 else ""
                lines.append(f"        {prefix}{reason.detail}")
    if report.fixes:
        lines.append("Fixes (verified: the pod then fits, checked with the scheduler's filters):")
        for i, fix in enumerate(report.fixes, 1):
            lines.append(f"  {i}. [verified] {fix.summary} -> fits node {fix.node}")
            for change in fix.changes:
                lines.append(f"       {change.text()}")
    else:
        lines.append("No verified fix found.")
    return "\n".join(lines) + "\n"


def render_json(report: Report) -> str:
    return json.dumps(report.json(), indent=2, sort_keys=False) + "\n"


def render(report: Report, output: str) -> str:
    return render_json(report) if output == "json" else render_text(report)


__all__ = ["Verdict", "render", "render_json", "render_text"]
