"""Object storage behind the API server: the `Storage` protocol and its backends."""

from draplane.storage.factory import open_storage
from draplane.storage.interface import Event, EventType, Storage, StoreError, Watch
from draplane.storage.memory import MemoryStorage
from draplane.storage.sqlite import SqliteStorage

__all__ = [
    "Event",
    "EventType",
    "MemoryStorage",
    "SqliteStorage",
    "Storage",
    "StoreError",
    "Watch",
    "open_storage",
]
