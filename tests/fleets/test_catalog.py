"""Loading fleet files: every shipped profile loads and expands; a bad file is one FleetError
naming the file and the field (and `--fleet` turns it into a usage error); draplane-default is
what `draplane up` publishes without a fleet; the node mix repeats over the nodes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from draplane.cli.main import build_parser, main
from draplane.cli.process import CommandError
from draplane.cli.up import _config as up_config
from draplane.drivers.example import DRIVER_NAME, DeviceProfile, device_class, node_slice_specs
from draplane.fleets import (
    FleetError,
    load_fleet,
    node_slice_specs as fleet_slice_specs,
    shipped_fleets,
)

HEADER = "apiVersion: draplane.dev/v1alpha1\nkind: Fleet\nmetadata: {name: t}\n"
GPU_TYPE = """
nodeTypes:
- name: t
  drivers:
  - driver: gpu.example.com
    devices:
%s
"""


def devices(text: str) -> str:
    """A one-type fleet whose device groups are `text` (indented under `devices:`)."""
    return HEADER + GPU_TYPE % "\n".join("    " + line for line in text.splitlines())


@dataclass(frozen=True)
class Bad:
    text: str
    message: str


BAD = [
    pytest.param(Bad("a: [", "not YAML"), id="not-yaml"),
    pytest.param(Bad("apiVersion: v1\nkind: Fleet\n", "must be draplane.dev/v1alpha1"), id="kind"),
    pytest.param(Bad(HEADER + "nodeTyeps: []\n", "nodeTyeps: unknown field"), id="unknown-field"),
    pytest.param(
        Bad(devices("- {name: 'gpu-{i}', count: -1}"), "devices[0].count: must be an integer"),
        id="negative-count",
    ),
    pytest.param(
        Bad(devices("- {name: 'gpu-{k}'}"), "unknown variable 'k'"), id="unknown-variable"
    ),
    pytest.param(Bad(devices("- {name: 'gpu-{i'}"), "a brace that opens no field"), id="brace"),
    pytest.param(
        Bad(devices("- {name: gpu, capacity: {memory: lots}}"), "capacity.memory: not a quantity"),
        id="bad-quantity",
    ),
    pytest.param(
        Bad(
            devices("- {name: gpu, attributes: {model: {string: a, int: 1}}}"),
            "attributes.model: must have exactly one of string, int, bool, version",
        ),
        id="two-attribute-types",
    ),
    pytest.param(
        Bad(
            devices("- {name: gpu, attributes: {index: {int: '{node}'}}}"),
            "'node-0' is not an integer",
        ),
        id="int-attribute-not-int",
    ),
    pytest.param(
        Bad(
            devices("- {name: gpu, partitions: [{name: 'p-{start}', placements: [0]}]}"),
            "need `counters` on the device",
        ),
        id="partitions-without-counters",
    ),
    pytest.param(
        Bad(
            devices(
                "- name: gpu\n  counters: {memory: 1Gi}\n  partitions:\n"
                "  - {name: 'p-{start}', placements: [0], consumes: {cores: '1'}}"
            ),
            "counters cores are not in the device's `counters`",
        ),
        id="consumes-unknown-counter",
    ),
    pytest.param(
        Bad(
            devices(
                "- name: gpu\n  counters: {memory: 1Gi}\n  partitions:\n"
                "  - {name: 'p-{start}', placements: [0], placementCounter: 'slice-{n}'}"
            ),
            "placement counter 'slice-0' is not one of its device's counters",
        ),
        id="placement-counter-unknown",
    ),
    pytest.param(
        Bad(devices("- {name: GPU_0}"), "ResourceSlice 0 is invalid: spec.devices[0].name"),
        id="device-name-invalid",
    ),
    pytest.param(
        Bad(
            devices("- {name: gpu, attributes: {model: {string: '%s'}}}" % ("x" * 65)),
            "ResourceSlice 0 is invalid: spec.devices[0].attributes[model].string: Too long",
        ),
        id="attribute-too-long",
    ),
    pytest.param(
        Bad(
            HEADER + "deviceClasses:\n- metadata: {name: c}\n  spec:\n    selectors:\n"
            "    - cel: {expression: 'device.driver =='}\n" + GPU_TYPE % "    - {name: gpu}",
            "DeviceClass is invalid: spec.selectors[0].cel.expression",
        ),
        id="class-cel-invalid",
    ),
    pytest.param(
        Bad(HEADER + GPU_TYPE % "    - {name: gpu}" + "nodes: [{type: other}]\n", "no node type"),
        id="unknown-node-type",
    ),
    pytest.param(
        Bad(HEADER + "nodes: [{profile: no-such-fleet}]\n", "no fleet profile 'no-such-fleet'"),
        id="unknown-profile",
    ),
]


@pytest.mark.parametrize("name", shipped_fleets())
def test_every_shipped_fleet_loads(name: str) -> None:
    fleet = load_fleet(name)
    assert fleet.name == name
    assert fleet.reference == name
    assert fleet.default_nodes > 0


def test_shipped_fleets() -> None:
    assert set(shipped_fleets()) == {
        "cpu-only",
        "draplane-default",
        "example-driver",
        "gpu-nic-numa",
        "mixed",
        "nvidia-gpu",
    }


@pytest.mark.parametrize("bad", BAD)
def test_bad_fleet_file_is_one_clear_error(bad: Bad, tmp_path: Path) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_text(bad.text)
    with pytest.raises(FleetError) as raised:
        load_fleet(str(path))
    assert str(raised.value).startswith(str(path)), raised.value
    assert bad.message in str(raised.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FleetError, match=r"cannot read fleet file .*missing\.yaml"):
        load_fleet(str(tmp_path / "missing.yaml"))


def test_profiles_in_a_cycle(tmp_path: Path) -> None:
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(HEADER + f"nodes: [{{profile: {b}}}]\n")
    b.write_text(HEADER + f"nodes: [{{profile: {a}}}]\n")
    with pytest.raises(FleetError, match="refer to each other in a cycle"):
        load_fleet(str(a))


def test_fleet_flag_reports_a_bad_file_as_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_text(devices("- {name: 'gpu-{k}'}"))
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["up", "--fleet", str(path)])
    assert exited.value.code == 2
    assert "unknown variable 'k'" in capsys.readouterr().err


def test_draplane_default_is_what_up_publishes_without_a_fleet() -> None:
    fleet = load_fleet("draplane-default")
    assert fleet.drivers == (DRIVER_NAME,)
    assert list(fleet.device_classes) == [device_class(DRIVER_NAME)]
    for node in ("node-0", "node-17"):
        published = fleet_slice_specs(fleet.node_type(0), DRIVER_NAME, node)
        assert published == node_slice_specs(DRIVER_NAME, node, DeviceProfile())


def test_node_mix_repeats_over_the_nodes() -> None:
    fleet = load_fleet("mixed")
    names = [fleet.node_type(i).name for i in range(30)]
    assert names == (["dgx-a100-40gb"] * 10 + ["cpu-only"] * 5) * 2
    assert fleet.default_nodes == 15
    assert fleet.drivers == ("gpu.nvidia.com", "compute-domain.nvidia.com")
    assert [c["metadata"]["name"] for c in fleet.device_classes] == [
        c["metadata"]["name"] for c in load_fleet("nvidia-gpu").device_classes
    ]


@pytest.mark.parametrize(
    "flags",
    [("--network-attached", "4"), ("--partitionable", "2"), ("--shareable",)],
)
def test_up_refuses_device_flags_with_a_fleet(flags: tuple[str, ...], tmp_path: Path) -> None:
    args = build_parser().parse_args(
        ["up", "--fleet", "nvidia-gpu", "--data-dir", str(tmp_path), *flags]
    )
    with pytest.raises(CommandError, match="--fleet gives the devices"):
        up_config(args)


def test_up_takes_the_fleets_node_count(tmp_path: Path) -> None:
    args = build_parser().parse_args(["up", "--fleet", "mixed", "--data-dir", str(tmp_path)])
    config = up_config(args)
    assert config.nodes == 15
    assert config.fleet is not None and config.fleet.name == "mixed"
    plain = up_config(build_parser().parse_args(["up", "--data-dir", str(tmp_path)]))
    assert (plain.nodes, plain.fleet) == (4, None)


def test_up_refuses_a_fleet_in_classic_mode(tmp_path: Path) -> None:
    args = build_parser().parse_args(
        ["up", "--fleet", "nvidia-gpu", "--kubernetes-version", "1.28", "--data-dir", str(tmp_path)]
    )
    with pytest.raises(CommandError, match=r"need Kubernetes 1\.36"):
        up_config(args)


def test_fleets_command_lists_and_describes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fleets"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0] for line in listed] == shipped_fleets()
    assert main(["fleets", "nvidia-gpu"]) == 0
    assert capsys.readouterr().out.splitlines()[1:4] == [
        "  4 x node type dgx-a100-40gb",
        "    gpu.nvidia.com: 152 devices in 4 slices, 8 counter sets",
        "    compute-domain.nvidia.com: 2 devices in 1 slices",
    ]
    assert main(["fleets", "no-such-fleet"]) == 1
    assert "no fleet profile 'no-such-fleet'" in capsys.readouterr().err
