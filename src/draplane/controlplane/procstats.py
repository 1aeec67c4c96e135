"""CPU time and peak RSS of running processes, read from Linux's /proc (`/proc/PID/stat`
utime + stime, `/proc/PID/status` VmHWM): what `draplane bench --processes` reports for each
component process."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True)
class ProcessUsage:
    cpu_s: float
    """User plus system CPU seconds so far."""
    peak_rss_mib: float
    """The highest resident set size so far (VmHWM)."""


def process_usage(pid: int, *, proc: Path = Path("/proc")) -> ProcessUsage | None:
    """The usage of process `pid`; None when it is gone (or /proc cannot be read)."""
    try:
        stat = (proc / str(pid) / "stat").read_text()
        status = (proc / str(pid) / "status").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces: split after it.
    fields = stat[stat.rindex(")") + 2 :].split()
    utime, stime = int(fields[11]), int(fields[12])
    peak_kib = 0
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            peak_kib = int(line.split()[1])
            break
    return ProcessUsage(cpu_s=(utime + stime) / _TICKS, peak_rss_mib=round(peak_kib / 1024.0, 1))


def pid_alive(pid: int) -> bool:
    """Whether `pid` names a process that is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2 :].split()[0] != "Z"
