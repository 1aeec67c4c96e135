"""The Kubernetes versions draplane serves, as modes of one control plane.

`1.28` is classic DRA (resource.k8s.io/v1alpha2: ResourceClass, ResourceClaim with
allocationMode, ResourceClaimTemplate, PodSchedulingContext); `1.36` is DRA with structured
parameters (resource.k8s.io/v1 DeviceClass, ResourceClaim, ResourceClaimTemplate,
ResourceSlice, with v1beta1/v1beta2 converted, and v1beta2 DeviceTaintRule). Every command
takes `--kubernetes-version`; the API server serves its mode's kinds, `/version` and discovery;
other components ask the API server (`from_version_info`) when the flag is not given.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from typing import Any

from draplane.api import kinds
from draplane.api.kinds import ResourceType


@dataclass(frozen=True)
class Mode:
    name: str
    """`1.28` or `1.36`: the value of `--kubernetes-version`."""
    git_version: str
    """What `/version` reports as gitVersion."""
    served: tuple[ResourceType, ...]
    """The built-in kinds, in discovery order."""

    @property
    def structured(self) -> bool:
        """True for DRA with structured parameters (resource.k8s.io/v1)."""
        return kinds.RESOURCE_SLICES in self.served

    @property
    def minor(self) -> int:
        return int(self.name.split(".")[1])

    def __str__(self) -> str:
        return self.name


CLASSIC = Mode("1.28", "v1.28.0", kinds.SERVED)
STRUCTURED = Mode("1.36", "v1.36.0", kinds.STRUCTURED_SERVED)
MODES: dict[str, Mode] = {m.name: m for m in (CLASSIC, STRUCTURED)}

DEFAULT = CLASSIC
"""The mode of every command without `--kubernetes-version` (and of a new data dir)."""

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


def add_argument(parser: argparse.ArgumentParser, *, server: bool = False) -> None:
    """`--kubernetes-version`: the API server's mode (default `DEFAULT`); for clients of an API
    server, None when not given (they ask the server)."""
    parser.add_argument(
        "--kubernetes-version",
        type=_argument,
        default=DEFAULT if server else None,
        help=(
            f"Kubernetes API to serve: {', '.join(MODES)} (default {DEFAULT})"
            if server
            else "Kubernetes API of the cluster: "
            + ", ".join(MODES)
            + " (default: what the API server's /version says)"
        ),
    )
