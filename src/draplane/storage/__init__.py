"""Object storage behind the API server: the `Storage` protocol and its backends."""

from draplane.storage.interface import Event, EventType, Storage, Watch

__all__ = ["Event", "EventType", "Storage", "Watch"]
