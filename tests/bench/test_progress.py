"""Plain progress lines when stderr is not a terminal."""

from __future__ import annotations

import io

from rich.console import Console

from draplane.bench.progress import PlainProgress, RichProgress, progress_for


def test_plain_progress_prints_phase_start_and_completion() -> None:
    stream = io.StringIO()
    progress = PlainProgress(stream, interval=3600)

    progress.phase("init pods bound", 10)
    progress.update(3)
    progress.update(10)
    progress.phase("measured pods bound", 5)
    progress.update(2)
    progress.close()

    assert stream.getvalue().splitlines() == [
        "init pods bound: 0/10",
        "init pods bound: 10/10",
        "measured pods bound: 0/5",
        "measured pods bound: 2/5",
    ]


def test_progress_for_picks_plain_lines_off_a_terminal() -> None:
    plain = progress_for(Console(file=io.StringIO(), force_terminal=False))
    rich = progress_for(Console(file=io.StringIO(), force_terminal=True))
    rich.close()

    assert isinstance(plain, PlainProgress)
    assert isinstance(rich, RichProgress)
