"""Client side of the API: the `Client` protocol, LocalClient, informers, workqueue, limiters."""

from draplane.client.events import NORMAL, WARNING, EventRecorder
from draplane.client.informer import DeletedFinalStateUnknown, Informer, InformerFactory
from draplane.client.interface import PATCH_CONTENT_TYPES, Client, PatchType
from draplane.client.leaderelection import LeaderElector
from draplane.client.lister import NAMESPACE_INDEX, Indexers, IndexFunc, Lister
from draplane.client.local import LocalClient
from draplane.client.mutationcache import MutationCache
from draplane.client.ratelimit import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    default_controller_rate_limiter,
)
from draplane.client.workers import run_workers
from draplane.client.workqueue import RateLimitingQueue, ShutDown

__all__ = [
    "NAMESPACE_INDEX",
    "NORMAL",
    "PATCH_CONTENT_TYPES",
    "WARNING",
    "BucketRateLimiter",
    "Client",
    "DeletedFinalStateUnknown",
    "EventRecorder",
    "IndexFunc",
    "Indexers",
    "Informer",
    "InformerFactory",
    "ItemExponentialFailureRateLimiter",
    "LeaderElector",
    "Lister",
    "LocalClient",
    "MaxOfRateLimiter",
    "MutationCache",
    "PatchType",
    "RateLimiter",
    "RateLimitingQueue",
    "ShutDown",
    "default_controller_rate_limiter",
    "run_workers",
]
