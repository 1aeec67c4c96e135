"""The api-create client run in its own process, so that the API server has a core to itself
as it would with a real remote client: `python -m draplane.bench.createclient --kubeconfig K
--namespace NS --prefix P --count N --writers W` prints {"seconds", "latencies"} as JSON.
"""

from __future__ import annotations

import argparse
import sys

import orjson

from draplane import eventloop
from draplane.bench.apicreate import create_all, objects
from draplane.client.rest import RESTClient


async def _run(args: argparse.Namespace) -> dict[str, object]:
    client = RESTClient.from_kubeconfig(args.kubeconfig)
    try:
        await create_all(
            client, objects(f"{args.prefix}-warm", args.writers * 2), writers=args.writers
        )
        seconds, latencies = await create_all(
            client, objects(args.prefix, args.count), writers=args.writers
        )
    finally:
        await client.close()
    return {"seconds": seconds, "latencies": latencies}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--writers", type=int, required=True)
    args = parser.parse_args(argv)
    result = eventloop.run(_run(args))
    sys.stdout.buffer.write(orjson.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
