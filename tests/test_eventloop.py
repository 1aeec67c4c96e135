"""`draplane.eventloop`: which loop a command runs on, chosen by `DRAPLANE_EVENT_LOOP`; an
unknown name is an error before anything runs; the suite's own async tests and every
`draplane` command run on it; gRPC's fork handlers are off unless the environment says."""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import warnings

import pytest
import uvloop

from draplane import eventloop
from draplane.cli import main as cli_main


async def _loop_type() -> type:
    return type(asyncio.get_running_loop())


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        (None, uvloop.Loop),
        ("", uvloop.Loop),
        ("uvloop", uvloop.Loop),
        (" uvloop ", uvloop.Loop),
        ("asyncio", asyncio.SelectorEventLoop),
    ],
)
def test_run_uses_the_chosen_loop(
    monkeypatch: pytest.MonkeyPatch, env: str | None, expected: type
) -> None:
    if env is None:
        monkeypatch.delenv(eventloop.EVENT_LOOP_ENV, raising=False)
    else:
        monkeypatch.setenv(eventloop.EVENT_LOOP_ENV, env)

    assert issubclass(eventloop.run(_loop_type()), expected)


def test_run_returns_the_value_and_raises_the_error_of_main(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(eventloop.EVENT_LOOP_ENV, raising=False)

    async def fails() -> None:
        await asyncio.sleep(0)
        raise LookupError("from main")

    async def answers() -> int:
        await asyncio.sleep(0)
        return 42

    assert eventloop.run(answers()) == 42
    with pytest.raises(LookupError, match="from main"):
        eventloop.run(fails())


@pytest.mark.parametrize("name", ["trio", "Uvloop", "selector"])
def test_an_unknown_loop_is_refused_and_main_never_runs(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv(eventloop.EVENT_LOOP_ENV, name)
    coro = _loop_type()

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a coroutine left unawaited would warn
        with pytest.raises(eventloop.UnknownEventLoop, match="asyncio, uvloop"):
            eventloop.run(coro)
    assert coro.cr_frame is None  # closed, not left pending


def test_the_command_reports_an_unknown_loop(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(eventloop.EVENT_LOOP_ENV, "trio")

    assert cli_main.main(["etcd-path"]) == 1
    assert "DRAPLANE_EVENT_LOOP='trio'" in capsys.readouterr().err


async def test_the_suite_runs_on_the_chosen_loop() -> None:
    loop = asyncio.get_running_loop()
    assert isinstance(loop, _LOOP_TYPES[eventloop.chosen()])


@pytest.mark.parametrize("env", ["uvloop", "asyncio"])
def test_a_command_runs_on_the_chosen_loop(monkeypatch: pytest.MonkeyPatch, env: str) -> None:
    monkeypatch.setenv(eventloop.EVENT_LOOP_ENV, env)
    seen: list[asyncio.AbstractEventLoop] = []

    async def command(args: argparse.Namespace) -> int:
        seen.append(asyncio.get_running_loop())
        return 7

    parser = argparse.ArgumentParser(prog="draplane")
    parser.set_defaults(func=command, command="probe")
    monkeypatch.setattr(cli_main, "build_parser", lambda command=None: parser)

    assert cli_main.main([]) == 7
    assert len(seen) == 1 and isinstance(seen[0], _LOOP_TYPES[env])
    assert seen[0].is_closed()


_LOOP_TYPES: dict[str, type] = {"uvloop": uvloop.Loop, "asyncio": asyncio.SelectorEventLoop}


@pytest.mark.parametrize(
    ("env", "expected"),
    [(None, "false"), ("true", "true"), ("false", "false")],
    ids=["unset", "kept-true", "kept-false"],
)
def test_import_turns_grpc_fork_handlers_off_unless_set(env: str | None, expected: str) -> None:
    environ = {k: v for k, v in os.environ.items() if k != eventloop.GRPC_FORK_SUPPORT_ENV}
    if env is not None:
        environ[eventloop.GRPC_FORK_SUPPORT_ENV] = env
    code = f"import os, draplane.eventloop; print(os.environ[{eventloop.GRPC_FORK_SUPPORT_ENV!r}])"

    done = subprocess.run(
        [sys.executable, "-c", code], env=environ, capture_output=True, timeout=60, check=True
    )

    assert done.stdout.decode().strip() == expected
