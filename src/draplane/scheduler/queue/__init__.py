"""The scheduling queue: activeQ, backoffQ, unschedulable pool, PreEnqueue gating, hints."""

from draplane.scheduler.queue.requeue import HintMap
from draplane.scheduler.queue.scheduling_queue import QueueOptions, SchedulingQueue

__all__ = ["HintMap", "QueueOptions", "SchedulingQueue"]
