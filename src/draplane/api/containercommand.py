"""What a simulated container does with its command: how long it runs, its exit code and what
it prints. There is no container runtime, so a handful of commands have their obvious meaning:

- `true`, `false`, `sleep N` (`infinity` runs until stopped), `echo WORDS...`, `env`, `printenv`
  and `set` (they print the container's environment, which the container's log always shows);
- `exit N` and sequences joined by `;` or `&&` inside `sh -c` / `bash -c` / `ash -c`, which
  run one after the other (an `&&` skips what follows a failure, `exit` ends the script);
- no command at all: images whose default command exits at once (busybox, alpine, ubuntu,
  debian, ... whose default is a shell with no input) exit 0 at once.

Anything else (a server, a long script) is unknown and runs until the pod is deleted; the pod's
`draplane.dev/run-seconds` and `draplane.dev/exit-code` annotations override all of this.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass
from functools import lru_cache

from draplane.api.meta import ObjLike

SHELLS = frozenset({"sh", "bash", "ash", "dash"})
ENV_COMMANDS = frozenset({"env", "printenv", "set"})
EXITING_IMAGES = frozenset(
    {"busybox", "alpine", "ubuntu", "debian", "fedora", "centos", "rockylinux", "almalinux"}
)
"""Images whose default command is a shell: with no terminal attached it exits at once."""


@dataclass(frozen=True)
class Run:
    """One run of a container whose command draplane knows."""

    seconds: float | None
    """How long it runs; None: until it is stopped."""
    exit_code: int = 0
    output: tuple[tuple[float, str], ...] = ()
    """(seconds after the start, line) it prints, besides its environment."""


class _Unknown(Exception):
    """A command draplane gives no meaning to."""


def run_of(container: ObjLike) -> Run | None:
    """The run the container's command describes; None when draplane does not know it."""
    argv = tuple(str(a) for a in (container.get("command") or []))
    argv += tuple(str(a) for a in (container.get("args") or []))
    if not argv:
        exits = _image_name(str(container.get("image") or "")) in EXITING_IMAGES
        return Run(0.0) if exits else None
    return _run_of_argv(argv)


@lru_cache(maxsize=1024)
def _run_of_argv(argv: tuple[str, ...]) -> Run | None:
    """`run_of` of a command line, parsed once: the node asks again at every status change of
    every pod, and a workload's pods share their command."""
    try:
        if _base(argv[0]) in SHELLS:
            if len(argv) < 3 or argv[1] != "-c":
                raise _Unknown
            return _script(argv[2])
        return _sequence([(list(argv), ";")])
    except _Unknown:
        return None


def _base(program: str) -> str:
    return program.rsplit("/", 1)[-1]


def _image_name(image: str) -> str:
    """`busybox` of `docker.io/library/busybox:1.36@sha256:...`."""
    name = image.split("@", 1)[0].rsplit("/", 1)[-1]
    return name.split(":", 1)[0]


def _script(text: str) -> Run:
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|<>()")
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError as err:  # an unclosed quote
        raise _Unknown from err
    commands: list[tuple[list[str], str]] = []
    current: list[str] = []
    for token in tokens:
        if token in (";", "&&"):
            commands.append((current, token))
            current = []
        elif token and token[0] in ";&|<>()":
            raise _Unknown  # pipes, redirections, subshells, background jobs
        else:
            current.append(token)
    commands.append((current, ";"))
    return _sequence([(c, sep) for c, sep in commands if c])


def _sequence(commands: list[tuple[list[str], str]]) -> Run:
    """Runs `commands` in order; each is followed by its separator (`;` or `&&`)."""
    at, code = 0.0, 0
    output: list[tuple[float, str]] = []
    skip = False
    for argv, separator in commands:
        if not skip:
            name, args = _base(argv[0]), argv[1:]
            if name == "exit":
                return Run(at, _exit_code(args), tuple(output))
            seconds, code, printed = _command(name, args)
            if seconds is None:
                return Run(None, 0, tuple(output))
            output += [(at, line) for line in printed]
            at += seconds
        skip = separator == "&&" and code != 0
        if separator == ";":
            skip = False
    return Run(at, code, tuple(output))


def _command(name: str, args: list[str]) -> tuple[float | None, int, list[str]]:
    """(seconds it runs or None for ever, exit code, lines printed) of one command."""
    if name == "true" or name == ":":
        return 0.0, 0, []
    if name == "false":
        return 0.0, 1, []
    if name in ENV_COMMANDS:
        return 0.0, 0, []
    if name == "echo":
        if args and args[0] == "-n":
            args = args[1:]
        return 0.0, 0, [" ".join(args)]
    if name == "sleep":
        return _sleep(args), 0, []
    raise _Unknown


def _sleep(args: list[str]) -> float | None:
    if not args:
        raise _Unknown
    if args[0] == "infinity":
        return None
    total = 0.0
    for arg in args:  # GNU sleep sums its arguments; s/m/h/d suffixes
        unit = {"s": 1, "m": 60, "h": 3600, "d": 86400}.get(arg[-1:], 0)
        number = arg[:-1] if unit else arg
        try:
            value = float(number)
        except ValueError as err:
            raise _Unknown from err
        if not math.isfinite(value) or value < 0:
            raise _Unknown
        total += value * (unit or 1)
    return total


def _exit_code(args: list[str]) -> int:
    if not args:
        return 0
    try:
        return int(args[0]) % 256
    except ValueError as err:
        raise _Unknown from err
