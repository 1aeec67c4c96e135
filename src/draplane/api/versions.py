"""The Kubernetes versions draplane serves, as modes of one control plane.

`1.28` is classic DRA (resource.k8s.io/v1alpha2: ResourceClass, ResourceClaim with
allocationMode, ResourceClaimTemplate, PodSchedulingContext); `1.36` is DRA with structured
parameters (resource.k8s.io/v1 DeviceClass, ResourceClaim, ResourceClaimTemplate,
ResourceSlice, with v1beta1/v1beta2 converted, and v1beta2 DeviceTaintRule). Every command
takes `--kubernetes-version`; the API server serves its mode's kinds, `/version` and discovery;
other components ask the API server (`from_version_info`) when the flag is not given.

Commands default to `1.36` (`DEFAULT`), on a new data dir; a data dir keeps the mode it was
written in (`draplane.storage.mode_marker.mode_for`). The in-process building blocks (Catalog,
Registry, ApiServer, `draplane.testing`) take a `mode` that defaults to `IN_PROCESS_DEFAULT`,
classic: their callers name the mode they build.
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

DEFAULT = STRUCTURED
"""The mode of every command without `--kubernetes-version` on a new data dir, and of
`ControlPlaneConfig`."""

IN_PROCESS_DEFAULT = CLASSIC
"""The `mode` of Catalog, Registry, ApiServer and the `draplane.testing` helpers when the caller
does not pass one."""

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
