"""kube-apiserver's etcd flags (`--etcd-servers`, `--etcd-cafile`, `--etcd-certfile`,
`--etcd-keyfile`, `--etcd-prefix`, `--etcd-compaction-interval`) as one value the commands pass
to `open_storage`, `store_spec` (which store the flags select: `--etcd-servers` alone means
etcd, as for kube-apiserver), and the parser of Go durations (`5m`, `1m30s`, `0`) they take."""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass

from draplane.storage.etcd_compaction import DEFAULT_INTERVAL

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")


def duration(text: str) -> float:
    """Seconds of a Go duration ("5m", "1m30s", "300ms", "0"); ValueError otherwise."""
    text = text.strip()
    if text == "0":
        return 0.0
    pos, total = 0, 0.0
    for m in _PART.finditer(text):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if pos != len(text) or not text:
        raise ValueError(f"invalid duration {text!r} (e.g. 5m, 1m30s, 0)")
    return total


def _duration_arg(text: str) -> float:
    try:
        return duration(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


@dataclass(frozen=True)
class EtcdFlags:
    servers: str = ""
    """Comma-separated URLs; empty: `--store etcd` runs a local single-member etcd."""
    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""
    prefix: str = "/registry"
    compaction_interval: float = DEFAULT_INTERVAL

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> EtcdFlags:
        return cls(
            args.etcd_servers,
            args.etcd_cafile,
            args.etcd_certfile,
            args.etcd_keyfile,
            args.etcd_prefix,
            args.etcd_compaction_interval,
        )


def store_spec(store: str | None, flags: EtcdFlags) -> str:
    """The store `--store` and the etcd flags select: `--store` when given, else etcd when
    `--etcd-servers` is set (kube-apiserver has no other store), else sqlite. ValueError when
    `--etcd-servers` comes with another store, which would silently leave etcd unused."""
    if store is None:
        return "etcd" if flags.servers else "sqlite"
    if flags.servers and store != "etcd":
        raise ValueError(
            f"--etcd-servers needs --store etcd (got --store {store}); leave --store unset or "
            "set it to etcd"
        )
    return store


def add_etcd_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("etcd (with --store etcd)")
    group.add_argument(
        "--etcd-servers",
        default="",
        help="etcd URLs (http(s)://host:port,...); without it --store etcd runs a local "
        "single-member etcd in the data dir",
    )
    group.add_argument("--etcd-cafile", default="", help="CA bundle of the etcd servers")
    group.add_argument("--etcd-certfile", default="", help="client certificate for etcd")
    group.add_argument("--etcd-keyfile", default="", help="client key for etcd")
    group.add_argument("--etcd-prefix", default="/registry", help="prefix of every etcd key")
    group.add_argument(
        "--etcd-compaction-interval",
        type=_duration_arg,
        default=DEFAULT_INTERVAL,
        help="how often to compact etcd's history (Go duration; default 5m, 0 disables)",
    )
