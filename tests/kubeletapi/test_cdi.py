"""CDI spec files as a node's container runtime reads them: JSON and YAML, the spec's own
containerEdits applied with each of its devices, unknown device IDs refused, broken files
listed and skipped."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from draplane.kubeletapi import cdi

JSON_SPEC = """{"cdiVersion": "0.6.0", "kind": "vendor.com/gpu",
  "containerEdits": {"env": ["VENDOR=yes"]},
  "devices": [{"name": "gpu0", "containerEdits": {"env": ["GPU=0", "VENDOR=gpu0"]}}]}"""
YAML_SPEC = """cdiVersion: 0.8.0
kind: vendor.com/nic
devices:
- name: nic-a
  containerEdits:
    env: ["NIC=a"]
    deviceNodes: [{path: /dev/nic-a}]
"""


@dataclass(frozen=True)
class Case:
    files: dict[str, str]
    ids: list[str]
    env: dict[str, str] | None
    """None: resolving fails."""
    errors: int = 0


CASES = [
    pytest.param(
        Case({"a.json": JSON_SPEC}, ["vendor.com/gpu=gpu0"], {"VENDOR": "gpu0", "GPU": "0"}),
        id="json-spec-edits-then-device-edits",
    ),
    pytest.param(Case({"b.yaml": YAML_SPEC}, ["vendor.com/nic=nic-a"], {"NIC": "a"}), id="yaml"),
    pytest.param(
        Case(
            {"a.json": JSON_SPEC, "b.yml": YAML_SPEC},
            ["vendor.com/nic=nic-a", "vendor.com/gpu=gpu0"],
            {"NIC": "a", "VENDOR": "gpu0", "GPU": "0"},
        ),
        id="two-specs",
    ),
    pytest.param(Case({"a.json": JSON_SPEC}, ["vendor.com/gpu=gpu9"], None), id="unknown-id"),
    pytest.param(
        Case(
            {"a.json": JSON_SPEC, "bad.json": "{", "kind.yaml": "kind: nokind\ndevices: []"},
            ["vendor.com/gpu=gpu0"],
            {"VENDOR": "gpu0", "GPU": "0"},
            errors=2,
        ),
        id="broken-files-skipped",
    ),
    pytest.param(Case({"a.txt": JSON_SPEC}, ["vendor.com/gpu=gpu0"], None), id="not-a-spec-file"),
]


@pytest.mark.parametrize("case", CASES)
def test_resolve(tmp_path: Path, case: Case) -> None:
    for name, text in case.files.items():
        (tmp_path / name).write_text(text)
    registry = cdi.load(tmp_path)
    assert len(registry.errors) == case.errors
    if case.env is None:
        with pytest.raises(cdi.CDIError, match="unresolvable CDI devices"):
            registry.resolve(case.ids)
    else:
        assert registry.resolve(case.ids) == case.env


def test_written_spec_resolves(tmp_path: Path) -> None:
    content = cdi.spec("driver.example.com/gpu", {"claim-1-gpu-0": {"GPU_DEVICE_0": "gpu-0"}})
    cdi.write_spec(tmp_path, "spec.json", content)
    device = cdi.device_id("driver.example.com/gpu", "claim-1-gpu-0")
    assert cdi.load(tmp_path).resolve([device]) == {"GPU_DEVICE_0": "gpu-0"}
    assert [p.name for p in tmp_path.iterdir()] == ["spec.json"]
