"""The mode marker `<data dir>/kubernetes-version`: the Kubernetes version (`1.28`, `1.36`) whose
objects the data dir holds, written beside the store's files when an API server first starts
there. Both modes store `resource.k8s.io/resourceclaims` under one key with different schemas,
so a data dir is only ever served in the mode that wrote it.

A data dir from before the marker (it has the API server's CA, no marker) is a 1.28 one.

Started without `--kubernetes-version`, a command serves the mode its data dir records
(`mode_for`), and `versions.DEFAULT` (1.36) in a new data dir; given, the flag must match the
recorded mode (`ensure_mode`).
"""

from __future__ import annotations

from pathlib import Path

from draplane.api import versions
from draplane.storage import files
from draplane.storage.interface import StoreError

MARKER = "kubernetes-version"
_EARLIER = "ca.crt"
"""Written by every API server that started in the data dir."""


class ModeMismatchError(StoreError):
    """The data dir was written in another mode."""


def recorded_mode(data_dir: str | Path) -> versions.Mode | None:
    """The mode the data dir was written in, None for a new data dir."""
    path = Path(data_dir) / MARKER
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        return versions.CLASSIC if (Path(data_dir) / _EARLIER).exists() else None
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc}") from exc
    try:
        return versions.parse(text)
    except ValueError:
        raise StoreError(f"{path} is damaged ({text[:40]!r})") from None


def mode_for(data_dir: str | Path, flag: versions.Mode | None) -> versions.Mode:
    """The mode to serve `data_dir` in: the flag when given (`ensure_mode` then checks it),
    else the mode the data dir was written in, else `versions.DEFAULT`."""
    if flag is not None:
        return flag
    found = recorded_mode(data_dir)
    return found if found is not None else versions.DEFAULT


def ensure_mode(data_dir: str | Path, mode: versions.Mode) -> None:
    """Record `mode` in a new data dir; ModeMismatchError when it holds the other mode's."""
    found = recorded_mode(data_dir)
    if found is not None and found != mode:
        raise ModeMismatchError(
            f"data dir {data_dir} holds a Kubernetes {found} cluster; start it with "
            f"--kubernetes-version {found}, or use another --data-dir for {mode}"
        )
    path = Path(data_dir) / MARKER
    if not path.exists():
        files.private_dir(data_dir)
        files.write_private(path, f"{mode}\n")
