"""What the checks of `draplane driver-check` share: the `Options` they run with and the
`State` earlier checks leave for later ones (the plugin's client, the node's devices, the
harness's claims)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.drivercheck._claims import ClaimMaker, SliceDevice
from draplane.drivercheck._plugin import PluginClient
from draplane.kubeletapi import DEFAULT_TIMEOUT


@dataclass
class Options:
    kubelet_dir: Path
    """The kubelet directory holding `<node>/` (as `--kubelet-dir` of `draplane nodes`)."""
    node: str
    driver: str
    client: Client
    """Reads slices and Nodes, creates the harness's claims and allocates them."""
    namespace: str = "driver-check"
    parameters: dict[str, Any] = field(default_factory=lambda: {"driverCheck": "true"})
    timeout: float = DEFAULT_TIMEOUT
    plugin_command: str = ""
    """A shell command that starts the plugin on this node (the kill-and-restart check)."""

    @property
    def node_dir(self) -> Path:
        return self.kubelet_dir / self.node


@dataclass
class State:
    options: Options
    plugin: PluginClient | None = None
    devices: list[SliceDevice] = field(default_factory=list)
    claims: ClaimMaker | None = None
    prepared: Obj | None = None
    """The claim of the idempotency checks."""
