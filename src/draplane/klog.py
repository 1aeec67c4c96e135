"""Verbosity levels as klog has them, on the standard logging module.

`log.log(V2, ...)` is printed from `-v 2` on: level V(n) is the logging level `INFO - n`, so
`-v N` sets the threshold to `INFO - N` and every V(n <= N) line passes; warnings and errors
always do. The components use the levels as Kubernetes components do:

- V0 (`log.info`): what an operator always wants to see: start-up, leadership, shutdown;
- V2: what each component decided: a claim created or deleted, a pod bound, a claim
  allocated or deallocated, a reservation dropped, an object garbage-collected;
- V4: every object a controller synced, every pod the scheduler tried, every pod a node synced;
- V5: queue internals;
- V6: every API request, in the client (verb, resource, outcome, duration).
"""

from __future__ import annotations

import logging

V2 = logging.INFO - 2
V4 = logging.INFO - 4
V5 = logging.INFO - 5
V6 = logging.INFO - 6


def level_for_verbosity(verbosity: int) -> int:
    """The logging threshold of `-v verbosity` (clamped: 0 would mean "inherit")."""
    return max(1, logging.INFO - max(0, verbosity))


def verbosity_of(levelno: int) -> int:
    """The V level of a record (0 for INFO and above)."""
    return max(0, logging.INFO - levelno)
