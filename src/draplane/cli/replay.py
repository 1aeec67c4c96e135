"""`draplane record` and `draplane replay` (`draplane.replay`).

`draplane record --kubeconfig K -o FILE [--duration S]` watches the DRA-relevant kinds of an API
server (read-only) and writes every change with its time and resourceVersion to FILE (JSON
lines; gzip when FILE ends `.gz`) until S seconds have passed or it is interrupted.

`draplane replay FILE [--speed 10] [--queueing-hints on|off] [--result R.json]` replays a
recording into a fresh in-process draplane and prints what it measured; `draplane replay
--compare A.json B.json [--chart F.png]` prints the differences between two saved results.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from pathlib import Path

import aiohttp

from draplane.api import errors
from draplane.cli.explain import find_kubeconfig
from draplane.cli.process import CommandError, rest_client
from draplane.replay import (
    RecordingError,
    compare_json,
    load_result,
    read_recording,
    record,
    render_table,
    replay,
    write_compare_chart,
)
from draplane.replay.recording import open_text


def _positive(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if number <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, not {value}")
    return number


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rec = subparsers.add_parser("record", help="record changes of the DRA-relevant kinds")
    rec.add_argument("--kubeconfig", default="", help="kubeconfig file (as kubectl finds it)")
    rec.add_argument("-o", "--output", required=True, metavar="FILE", help="recording to write")
    rec.add_argument("--duration", type=_positive, default=None, metavar="SECONDS",
                     help="stop after SECONDS (default: when interrupted)")  # fmt: skip
    rec.set_defaults(func=record_main)

    rep = subparsers.add_parser(
        "replay",
        help="replay a recording into a fresh draplane, or compare two replays",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rep.add_argument("recording", nargs="?", default="", metavar="FILE")
    rep.add_argument("--speed", type=_positive, default=1.0, help="time compression (10: 10x)")
    rep.add_argument("--queueing-hints", choices=["on", "off"], default="on")
    rep.add_argument("--result", default="", metavar="FILE", help="save the result as JSON")
    rep.add_argument("--compare", nargs=2, metavar=("A", "B"), help="two saved results")
    rep.add_argument("--chart", default="", metavar="FILE", help="PNG of pending over time")
    rep.add_argument("--timeout", type=_positive, default=300.0, help="seconds to settle")
    rep.set_defaults(func=replay_main)


async def record_main(args: argparse.Namespace) -> int:
    client = rest_client(find_kubeconfig(args.kubeconfig))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    if args.duration:
        loop.call_later(args.duration, stop.set)
    try:
        with open_text(Path(args.output), "w") as out:
            count = await record(client, out, stop=stop)
    except OSError as err:
        raise CommandError(f"cannot write {args.output}: {err.strerror or err}") from err
    except errors.StatusError as err:
        raise CommandError(str(err)) from err
    except aiohttp.ClientError as err:
        raise CommandError(f"cannot reach the API server: {err}") from err
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(sig)
        await client.close()
    print(f"recorded {count} events to {args.output}", file=sys.stderr)
    return 0


async def replay_main(args: argparse.Namespace) -> int:
    if bool(args.compare) == bool(args.recording):
        raise CommandError("give a recording FILE to replay, or --compare A B")
    try:
        if args.compare:
            a, b = (load_result(Path(p)) for p in args.compare)
            sys.stdout.write(render_table(compare_json(a, b)))
            if args.chart:
                write_compare_chart(Path(args.chart), a, b)
            return 0
        events = read_recording(Path(args.recording))
    except RecordingError as err:
        raise CommandError(str(err)) from err
    result = await replay(
        events,
        speed=args.speed,
        queueing_hints=args.queueing_hints == "on",
        timeout=args.timeout,
    )
    lines = ["| | value |", "|---|---|"]
    for name, value in {**result.settings, **result.summary()}.items():
        lines.append(f"| {name} | {value} |")
    lines += [f"\nrefused by the fresh server: {e}" for e in result.errors]
    sys.stdout.write("\n".join(lines) + "\n")
    if args.result:
        result.save(Path(args.result))
    if args.chart:
        write_compare_chart(Path(args.chart), result)
    return 0
