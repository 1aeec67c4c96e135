"""`LocalClient`: the `Client` in-process, sending each `Request` to the API server's handler.

It takes the same authorization, admission, validation and storage path as an HTTP request
(the handler is the registry both share), just without encoding and the wire.
"""

from __future__ import annotations

from draplane.api.auth import UserInfo
from draplane.api.handler import ApiHandler, WatchStream
from draplane.api.meta import Obj
from draplane.api.request import Request
from draplane.client.interface import Client


class LocalTransport:
    def __init__(self, handler: ApiHandler, user: UserInfo) -> None:
        self.handler = handler
        self.user_info = user

    @property
    def user(self) -> str:
        return self.user_info.name

    async def send(self, request: Request) -> Obj | WatchStream:
        return await self.handler.handle(self.user_info, request)

    async def close(self) -> None:
        """Nothing to release: there is no connection."""


class LocalClient(Client):
    """A `Client` calling `handler` as `user`."""

    transport: LocalTransport

    def __init__(self, handler: ApiHandler, user: UserInfo) -> None:
        super().__init__(LocalTransport(handler, user))

    @property
    def user_info(self) -> UserInfo:
        return self.transport.user_info

    def with_user(self, user: UserInfo) -> LocalClient:
        """The same handler, acting as another user."""
        return LocalClient(self.transport.handler, user)
