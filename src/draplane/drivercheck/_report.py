"""The outcome of `draplane driver-check`: one `CheckResult` per check (passed, failed or
skipped, with the evidence: what was sent, what came back), and the `Report` of all of them, as
JSON (`-o json`) or as text for a person."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PASS = "pass"
FAIL = "fail"
SKIP = "skip"


@dataclass
class CheckResult:
    name: str
    description: str
    status: str = PASS
    evidence: list[str] = field(default_factory=list)

    def note(self, line: str) -> None:
        """Evidence that does not change the outcome."""
        self.evidence.append(line)

    def fail(self, line: str) -> None:
        self.status = FAIL
        self.evidence.append(f"FAIL: {line}")

    def expect(self, condition: bool, line: str) -> bool:
        """`line` as evidence, failing the check unless `condition` holds."""
        if condition:
            self.note(line)
        else:
            self.fail(line)
        return condition

    def skip(self, why: str) -> None:
        self.status = SKIP
        self.evidence.append(why)


@dataclass
class Report:
    driver: str
    node: str
    checks: list[CheckResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.status != FAIL for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {
            "driver": self.driver,
            "node": self.node,
            "passed": self.ok,
            "checks": [
                {
                    "name": c.name,
                    "description": c.description,
                    "status": c.status,
                    "evidence": c.evidence,
                }
                for c in self.checks
            ],
        }

    def to_text(self) -> str:
        lines = [f"driver {self.driver} on node {self.node}"]
        for check in self.checks:
            lines.append(f"[{check.status.upper()}] {check.name}: {check.description}")
            lines += [f"    {line}" for line in check.evidence]
        counts = {s: sum(1 for c in self.checks if c.status == s) for s in (PASS, FAIL, SKIP)}
        lines.append(f"{counts[PASS]} passed, {counts[FAIL]} failed, {counts[SKIP]} skipped")
        return "\n".join(lines) + "\n"
