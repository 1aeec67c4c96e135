"""The components `draplane up --disable` leaves out, so that Kubernetes' own binaries (or a
user's build of them) take their place against draplane's API server, nodes and drivers.

The names are the ones upstream gives them: `scheduler` (kube-scheduler), `controller-manager`
(every controller: the whole kube-controller-manager) and each controller draplane runs by its
kube-controller-manager `--controllers` name (`resourceclaim-controller`,
`garbage-collector-controller`, ...; `draplane.controllers.manager.CONTROLLER_NAMES`). Both the
in-process `ControlPlane` and `ProcessPlane` read a `Disabled` value; the one parser of the
flag's value is `parse`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from draplane.controllers.manager import CONTROLLER_NAMES, controller_name

SCHEDULER = "scheduler"
CONTROLLER_MANAGER = "controller-manager"
COMPONENTS = (SCHEDULER, CONTROLLER_MANAGER, *CONTROLLER_NAMES)
"""Every name `--disable` takes."""


@dataclass(frozen=True)
class Disabled:
    """What is left out of the control plane (nothing by default)."""

    names: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        unknown = sorted(self.names - set(COMPONENTS))
        if unknown:
            raise ValueError(
                f"cannot disable {', '.join(unknown)}: not a draplane component "
                f"(valid: {', '.join(COMPONENTS)})"
            )

    @classmethod
    def of(cls, names: Iterable[str]) -> Disabled:
        return cls(frozenset(names))

    @property
    def scheduler(self) -> bool:
        return SCHEDULER in self.names

    def controllers(self) -> tuple[str, ...]:
        """The controllers the control plane still runs, by kube-controller-manager's names
        (none when `controller-manager` is disabled)."""
        if CONTROLLER_MANAGER in self.names:
            return ()
        return tuple(name for name in CONTROLLER_NAMES if name not in self.names)

    def controllers_flag(self) -> str:
        """`controllers()` as a kube-controller-manager `--controllers` value (`*,-foo,...`)."""
        kept = self.controllers()
        return ",".join(["*", *(f"-{name}" for name in CONTROLLER_NAMES if name not in kept)])

    def describe(self) -> str:
        """What `draplane up` prints: the disabled components in `COMPONENTS` order."""
        return ", ".join(name for name in COMPONENTS if name in self.names)


NOTHING = Disabled()


def parse(value: str) -> Disabled:
    """`--disable`'s value: comma-separated names of `COMPONENTS`, a controller also by the
    alias kube-controller-manager accepts (`garbagecollector`; blanks ignored); raises
    ValueError, listing the valid names, for one that is not."""
    names = (name.strip() for name in value.split(","))
    return Disabled.of(controller_name(name) or name for name in names if name)
