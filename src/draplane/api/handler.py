"""The `ApiHandler` protocol: the API server's one entry, callable in-process with a user.

The API server's registry implements it (authorization, admission, defaulting, validation,
storage); the HTTP layer and `LocalClient` both build a `Request` and call `handle`, so both
share one request path. Watches return a `WatchStream`; every other verb an object.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Literal, Protocol

from draplane.api.auth import UserInfo
from draplane.api.meta import Obj
from draplane.api.request import Request

WatchEventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]


@dataclass(frozen=True, slots=True)
class WatchEvent:
    type: WatchEventType
    object: Obj


class WatchStream(Protocol):
    def __aiter__(self) -> AsyncIterator[WatchEvent]: ...

    async def close(self) -> None: ...


class ApiHandler(Protocol):
    async def handle(self, user: UserInfo, request: Request) -> Obj | WatchStream:
        """Serve `request` as `user`: an object, a list, a Status, or a watch stream."""
        ...
