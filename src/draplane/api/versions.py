"""The Kubernetes versions draplane serves, as modes of one control plane.

`1.28` is classic DRA (resource.k8s.io/v1alpha2: ResourceClass, ResourceClaim with
allocationMode, ResourceClaimTemplate, PodSchedulingContext); `1.36` is DRA with structured
parameters (resource.k8s.io/v1 DeviceClass, ResourceClaim, ResourceClaimTemplate,
ResourceSlice, with v1beta1/v1beta2 converted, and v1beta2 DeviceTaintRule). Every command
takes `--kubernetes-version`; the API server serves its mode's kinds, `/version` and discovery;
other components ask the API server's `/version` (`from_version_info`,
`draplane.client.servermode`) when the flag is not given.

A `Mode` is data: its names, the kinds it serves and stores, the kinds of its claims,
templates and classes, and `dra`, the kind of DRA it does. Components pass the mode itself and
keep their per-mode policy keyed by `mode.dra` (a small table picked from once, when they are
built); nothing here knows a component.

One default: commands (and `ApiServer`, `ControlPlaneConfig`) serve `1.36` (`DEFAULT`) on a new
data dir; a data dir keeps the mode it was written in (`draplane.storage.mode_marker.mode_for`).
The API server's building blocks (`Catalog`, `Registry`) and the components (scheduler,
controller-manager, RBAC bootstrap policy) take the mode without a default; the test helpers of
`draplane.testing` pass `CLASSIC` unless told otherwise.
"""

from __future__ import annotations

import argparse
import enum
import re
from dataclasses import dataclass
from typing import Any

from draplane.api import kinds
from draplane.api.kinds import ResourceType


class Dra(enum.Enum):
    """How a mode allocates devices: the key of the components' per-mode policy."""

    CLASSIC = "classic DRA"
    """resource.k8s.io/v1alpha2: drivers' controllers allocate, over PodSchedulingContexts."""
    STRUCTURED = "DRA with structured parameters"
    """resource.k8s.io/v1: the scheduler allocates from the ResourceSlices drivers publish."""


@dataclass(frozen=True)
class Mode:
    name: str
    """`1.28` or `1.36`: the value of `--kubernetes-version`."""
    git_version: str
    """What `/version` reports as gitVersion."""
    dra: Dra
    served: tuple[ResourceType, ...]
    """The built-in kinds, in discovery order."""
    stored: tuple[ResourceType, ...]
    """The built-in kinds that are stored, each resource once (not the versions converted to
    its storage version)."""
    resource_claims: ResourceType
    claim_templates: ResourceType
    classes: ResourceType
    """ResourceClass (1.28) or DeviceClass (1.36): what a claim's request names."""

    @property
    def structured(self) -> bool:
        """True for DRA with structured parameters (resource.k8s.io/v1)."""
        return self.dra is Dra.STRUCTURED

    @property
    def minor(self) -> int:
        return int(self.name.split(".")[1])

    def __str__(self) -> str:
        return self.name


_CONVERTED = {*kinds.STRUCTURED_V1BETA1, *kinds.STRUCTURED_V1BETA2, kinds.EVENTS_V1}
"""The beta versions of the 1.36 kinds, served from their v1 objects' storage, and
events.k8s.io/v1 Events, served from core/v1 Events' (`draplane.api.conversion`)."""

CLASSIC = Mode(
    "1.28",
    "v1.28.0",
    Dra.CLASSIC,
    kinds.SERVED,
    kinds.STORED,
    resource_claims=kinds.RESOURCE_CLAIMS,
    claim_templates=kinds.RESOURCE_CLAIM_TEMPLATES,
    classes=kinds.RESOURCE_CLASSES,
)
STRUCTURED = Mode(
    "1.36",
    "v1.36.0",
    Dra.STRUCTURED,
    kinds.STRUCTURED_SERVED,
    tuple(r for r in kinds.STRUCTURED_SERVED if "list" in r.verbs and r not in _CONVERTED),
    resource_claims=kinds.RESOURCE_CLAIMS_V1,
    claim_templates=kinds.RESOURCE_CLAIM_TEMPLATES_V1,
    classes=kinds.DEVICE_CLASSES,
)
MODES: dict[str, Mode] = {m.name: m for m in (CLASSIC, STRUCTURED)}

DEFAULT = STRUCTURED
"""The mode of every command without `--kubernetes-version` on a new data dir, of
`ControlPlaneConfig` and of an `ApiServer` given none."""

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$")


def parse(value: str) -> Mode:
    """`1.28`, `v1.36`, `1.36.2` -> the mode; ValueError naming the choices otherwise."""
    m = _VERSION.match(value.strip())
    mode = MODES.get(f"{m.group(1)}.{m.group(2)}") if m else None
    if mode is None:
        choices = ", ".join(MODES)
        raise ValueError(f"unsupported Kubernetes version {value!r} (supported: {choices})")
    return mode


def from_version_info(info: Any) -> Mode:
    """The mode of an API server from its `/version` document (gitVersion, else major/minor);
    ValueError when it is not a served version."""
    if isinstance(info, dict):
        git = info.get("gitVersion")
        if isinstance(git, str) and git:
            return parse(git)
        major, minor = info.get("major"), info.get("minor")
        if major and minor:
            return parse(f"{major}.{str(minor).rstrip('+')}")
    raise ValueError(f"not a /version document: {info!r}")


def _argument(value: str) -> Mode:
    try:
        return parse(value)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def add_argument(
    parser: argparse.ArgumentParser, *, server: bool = False, default_help: str | None = None
) -> None:
    """`--kubernetes-version`, None when not given: an API server then serves its data dir's
    recorded mode (`DEFAULT` for a new one), clients of an API server ask it. `default_help`
    replaces the server's "(default ...)" text."""
    server_default = (
        default_help or f"the mode the data dir was written in; {DEFAULT} for a new data dir"
    )
    parser.add_argument(
        "--kubernetes-version",
        type=_argument,
        default=None,
        help=(
            f"Kubernetes API to serve: {', '.join(MODES)} (default: {server_default})"
            if server
            else "Kubernetes API of the cluster: "
            + ", ".join(MODES)
            + " (default: what the API server's /version says)"
        ),
    )
