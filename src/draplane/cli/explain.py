"""`draplane explain pod NS/NAME` (and `kubectl draplane explain pod NS/NAME`, the
`kubectl-draplane` entry point): why the pod is not scheduled, per group of nodes failing alike
and per claim request, then the smallest checked fixes, computed with the scheduler's filters
and the structured allocator on a read-only snapshot of the cluster (`draplane.explain`).

The kubeconfig is found as kubectl finds it: `--kubeconfig`, else the first file of
`$KUBECONFIG`, else `~/.kube/config`. Exit codes: 0 the pod is bound or fits some node now,
1 an error, 2 unschedulable with at least one verified fix, 3 unschedulable with none.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import aiohttp

from draplane.api import errors
from draplane.cli.process import CommandError, rest_client
from draplane.explain import Verdict, explain_pod, render


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "explain",
        help="why a pod is not scheduled, with checked fixes (read-only)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("kind", choices=["pod", "pods", "po"], help="what to explain")
    parser.add_argument("target", metavar="NS/NAME", help="the pod (NAME alone: in --namespace)")
    parser.add_argument("-n", "--namespace", default="", help="namespace of a NAME without NS/")
    parser.add_argument("--kubeconfig", default="", help="kubeconfig file (as kubectl finds it)")
    parser.add_argument("-o", "--output", choices=["text", "json"], default="text")
    parser.add_argument(
        "--no-fixes", action="store_true", help="only explain; do not look for fixes"
    )
    parser.set_defaults(func=async_main)


def find_kubeconfig(flag: str, environ: dict[str, str] | None = None) -> str:
    """`--kubeconfig`, else the first existing file of `$KUBECONFIG`, else ~/.kube/config."""
    if flag:
        return flag
    env = os.environ if environ is None else environ
    for entry in (env.get("KUBECONFIG") or "").split(os.pathsep):
        if entry and Path(entry).exists():
            return entry
    home = env.get("HOME") or str(Path.home())
    return str(Path(home) / ".kube" / "config")


def split_target(target: str, namespace: str) -> tuple[str, str]:
    ns, sep, name = target.partition("/")
    if not sep:
        return namespace or "default", target
    if not ns or not name or "/" in name:
        raise CommandError(f"pod must be NS/NAME or NAME, got {target!r}")
    return ns, name


async def async_main(args: argparse.Namespace) -> int:
    namespace, name = split_target(args.target, args.namespace)
    client = rest_client(find_kubeconfig(args.kubeconfig))
    try:
        report = await explain_pod(client, namespace, name, fixes=not args.no_fixes)
    except errors.StatusError as err:
        print(f"draplane explain: error: {err}", file=sys.stderr)
        return int(Verdict.ERROR)
    except (aiohttp.ClientError, OSError) as err:
        print(f"draplane explain: error: cannot reach the API server: {err}", file=sys.stderr)
        return int(Verdict.ERROR)
    finally:
        await client.close()
    sys.stdout.write(render(report, args.output))
    return int(report.verdict)
