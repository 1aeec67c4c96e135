"""klog-style logging for every command: `-v N` verbosity and `--log-format text|json`."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
import time

import orjson


class KlogFormatter(logging.Formatter):
    """`Lmmdd hh:mm:ss.uuuuuu pid file:line] msg`, as klog prints it."""

    def format(self, record: logging.LogRecord) -> str:
        level = {logging.DEBUG: "I", logging.INFO: "I", logging.WARNING: "W"}.get(
            record.levelno, "E"
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
            "v": 0 if record.levelno >= logging.INFO else 4,
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
        help="log verbosity (0: important only, 2: steady state, 4: debug)",
    )
    parser.add_argument("--log-format", choices=("text", "json"), default="text")


def setup_logging(args: argparse.Namespace) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if args.log_format == "json" else KlogFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    verbosity = int(getattr(args, "verbosity", 0))
    root.setLevel(
        logging.DEBUG if verbosity >= 4 else logging.INFO if verbosity >= 1 else logging.WARNING
    )
    logging.getLogger("draplane").setLevel(logging.DEBUG if verbosity >= 4 else logging.INFO)
    logging.getLogger("aiohttp.access").setLevel(
        logging.INFO if verbosity >= 6 else logging.WARNING
    )
