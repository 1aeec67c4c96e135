"""KubeSchedulerConfiguration parsing: supported fields and clear errors for the rest."""

from __future__ import annotations

from pathlib import Path

import pytest

from draplane.api.errors import StatusError
from draplane.scheduler.config import (
    PluginRef,
    PluginSet,
    Profile,
    SchedulerConfig,
    load_config,
    parse_config,
)

VALID = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
podMaxBackoffSeconds: 5
profiles:
- schedulerName: my-scheduler
  plugins:
    multiPoint:
      disabled: [{name: TaintToleration}]
    score:
      enabled: [{name: NodeResourcesFit, weight: 4}]
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: LeastAllocated}}
"""


def test_valid_file(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(VALID)
    assert load_config(str(path)) == SchedulerConfig(
        profile=Profile(
            scheduler_name="my-scheduler",
            plugins={
                "multiPoint": PluginSet(disabled=("TaintToleration",)),
                "score": PluginSet(enabled=(PluginRef("NodeResourcesFit", 4),)),
            },
            plugin_config={"NodeResourcesFit": {"scoringStrategy": {"type": "LeastAllocated"}}},
        ),
        pod_max_backoff_seconds=5.0,
    )


BASE = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


@pytest.mark.parametrize(
    ("doc", "fields"),
    [
        pytest.param(
            {**BASE, "apiVersion": "kubescheduler.config.k8s.io/v1beta3"},
            ["apiVersion"],
            id="old-api-version",
        ),
        pytest.param({**BASE, "leaderElection": {}}, ["leaderElection"], id="unsupported-field"),
        pytest.param({**BASE, "profiles": [{}, {}]}, ["profiles"], id="two-profiles"),
        pytest.param(
            {**BASE, "profiles": [{"plugins": {"preFliter": {}}}]},
            ["profiles[0].plugins.preFliter"],
            id="unknown-extension-point",
        ),
        pytest.param(
            {
                **BASE,
                "profiles": [{"plugins": {"score": {"enabled": [{"name": "X", "weight": -1}]}}}],
            },
            ["profiles[0].plugins.score.enabled[0].weight"],
            id="negative-weight",
        ),
        pytest.param(
            {**BASE, "podInitialBackoffSeconds": 20},
            ["podMaxBackoffSeconds"],
            id="max-backoff-below-initial",
        ),
        pytest.param([], [""], id="not-an-object"),
        pytest.param(
            {**BASE, "profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": "x"}]}]},
            ["profiles[0].pluginConfig[0].args"],
            id="plugin-args-not-an-object",
        ),
    ],
)
def test_invalid_configs(doc: object, fields: list[str]) -> None:
    with pytest.raises(StatusError) as info:
        parse_config(doc)
    assert info.value.code == 422
    assert [c["field"] for c in info.value.details["causes"]] == fields


def test_unreadable_file_is_a_bad_request(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("profiles: [")
    with pytest.raises(StatusError) as info:
        load_config(str(path))
    assert info.value.reason == "BadRequest"
