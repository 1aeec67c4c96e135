"""klog-style logging for every command: `-v N` verbosity and `--log-format text|json`.

`-v N` prints the V(n <= N) lines of draplane (see `draplane.klog` for what each level holds);
other libraries log warnings only, their info lines from -v 1 and debug lines from -v 10.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
import time

import orjson

from draplane.klog import level_for_verbosity, verbosity_of


class KlogFormatter(logging.Formatter):
    """`Lmmdd hh:mm:ss.uuuuuu pid file:line] msg`, as klog prints it."""

    def format(self, record: logging.LogRecord) -> str:
        level = (
            "I"
            if record.levelno < logging.WARNING
            else "W"
            if record.levelno < logging.ERROR
            else "E"
        )
        t = time.localtime(record.created)
        micros = int((record.created % 1) * 1_000_000)
        head = (
            f"{level}{t.tm_mon:02d}{t.tm_mday:02d} {t.tm_hour:02d}:{t.tm_min:02d}:"
            f"{t.tm_sec:02d}.{micros:06d} {os.getpid():7d} {record.filename}:{record.lineno}]"
        )
        text = f"{head} {record.getMessage()}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "ts": record.created,
            "v": verbosity_of(record.levelno),
            "msg": record.getMessage(),
            "logger": record.name,
            "thread": threading.get_ident(),
        }
        if record.exc_info:
            entry["err"] = self.formatException(record.exc_info)
        return orjson.dumps(entry).decode()


def add_logging_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-v",
        "--v",
        dest="verbosity",
        type=int,
        default=0,
        help="log verbosity (0: important only, 2: what each component decided, 4: every "
        "object synced, 6: every API request)",
    )
    parser.add_argument("--log-format", choices=("text", "json"), default="text")


def setup_logging(args: argparse.Namespace) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if args.log_format == "json" else KlogFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    verbosity = int(getattr(args, "verbosity", 0))
    root.setLevel(
        logging.WARNING
        if verbosity < 1
        else logging.INFO
        if verbosity < logging.INFO - logging.DEBUG
        else logging.DEBUG
    )
    logging.getLogger("draplane").setLevel(level_for_verbosity(verbosity))
    logging.getLogger("aiohttp.access").setLevel(
        logging.INFO if verbosity >= 6 else logging.WARNING
    )
