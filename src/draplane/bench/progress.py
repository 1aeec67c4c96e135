"""Progress display on stderr: a rich progress bar on a terminal, plain lines otherwise.

The runner reports phases ("init pods bound", ...) with a total, then the count reached.
"""

from __future__ import annotations

import time
from typing import IO, Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)


class ProgressSink(Protocol):
    def phase(self, description: str, total: int) -> None:
        """Start a phase: a new bar (or line) with `total` steps."""
        ...

    def update(self, completed: int) -> None: ...

    def close(self) -> None: ...


class NullProgress:
    def phase(self, description: str, total: int) -> None:
        return None

    def update(self, completed: int) -> None:
        return None

    def close(self) -> None:
        return None


class PlainProgress:
    """One line per phase and then at most one every `interval` seconds."""

    def __init__(self, stream: IO[str], *, interval: float = 2.0) -> None:
        self._stream = stream
        self._interval = interval
        self._description = ""
        self._total = 0
        self._last_print = 0.0
        self._last_completed = -1

    def phase(self, description: str, total: int) -> None:
        self._flush_final()
        self._description, self._total, self._last_completed = description, total, -1
        self._print(0)

    def update(self, completed: int) -> None:
        if completed == self._last_completed:
            return
        self._last_completed = completed
        if completed >= self._total or time.monotonic() - self._last_print >= self._interval:
            self._print(completed)

    def close(self) -> None:
        self._flush_final()
        self._description = ""

    def _flush_final(self) -> None:
        if self._description and self._last_completed not in (-1, self._total):
            self._print(self._last_completed)

    def _print(self, completed: int) -> None:
        self._last_print = time.monotonic()
        print(f"{self._description}: {completed}/{self._total}", file=self._stream, flush=True)


class RichProgress:
    def __init__(self, console: Console) -> None:
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self._progress.start()
        self._task: TaskID | None = None

    def phase(self, description: str, total: int) -> None:
        self._task = self._progress.add_task(description, total=total)

    def update(self, completed: int) -> None:
        if self._task is not None:
            self._progress.update(self._task, completed=completed)

    def close(self) -> None:
        self._progress.stop()


def progress_for(console: Console) -> ProgressSink:
    """A rich bar when `console` is a terminal, plain lines otherwise."""
    if console.is_terminal:
        return RichProgress(console)
    return PlainProgress(console.file)
