"""Writes objects to a SqliteStorage forever, printing each acknowledged name; killed by a test.

Usage: python crash_writer.py DB_PATH WRITERS
"""

from __future__ import annotations

import asyncio
import itertools
import sys

from draplane.api.kinds import CONFIGMAPS
from draplane.storage.sqlite import SqliteStorage


async def main(path: str, writers: int) -> None:
    store = SqliteStorage(path)
    await store.start()
    counter = itertools.count()

    async def writer() -> None:
        while True:
            name = f"cm-{next(counter):07d}"
            obj = {"metadata": {"name": name, "namespace": "crash"}, "data": {"k": "v" * 500}}
            await store.create(CONFIGMAPS.key, obj)
            sys.stdout.write(name + "\n")
            sys.stdout.flush()

    await asyncio.gather(*(writer() for _ in range(writers)))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
