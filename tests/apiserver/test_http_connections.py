"""The HTTPS server's connections: `stop()` ends each one at once, also that of a client that
never answers the TLS close (as urllib3, which only drops its socket), so no socket outlives the
server."""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Callable
from typing import TypeVar

from draplane.testing.httpserver import HttpServer

T = TypeVar("T")


class SilentTLSClient:
    """TLS over a plain socket through memory BIOs, so the test reads the raw TCP stream and
    the client sends nothing the test did not ask for (no close_notify)."""

    def __init__(self, port: int, context: ssl.SSLContext) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self._in, self._out = ssl.MemoryBIO(), ssl.MemoryBIO()
        self._tls = context.wrap_bio(self._in, self._out, server_hostname="127.0.0.1")

    def _pump(self, op: Callable[[], T]) -> T:
        while True:
            try:
                result = op()
            except ssl.SSLWantReadError:
                self.sock.sendall(self._out.read())
                data = self.sock.recv(65536)
                if not data:
                    raise ConnectionError("server closed the connection") from None
                self._in.write(data)
                continue
            self.sock.sendall(self._out.read())
            return result

    def get(self, path: str) -> bytes:
        self._pump(self._tls.do_handshake)
        request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
        self._pump(lambda: self._tls.write(request))
        return self._pump(lambda: self._tls.read(65536))

    def read_until_tcp_close(self) -> bool:
        """True when the server closes the TCP connection within the socket timeout."""
        try:
            while self.sock.recv(65536):
                pass
        except TimeoutError:
            return False
        return True


async def test_stop_closes_the_connection_of_a_client_that_never_answers(
    server: HttpServer,
) -> None:
    client = SilentTLSClient(server.server.port, server.ssl_context())
    try:
        response = await asyncio.to_thread(client.get, "/version")
        assert response.startswith(b"HTTP/1.1 200 OK")

        await server.server.stop()

        assert await asyncio.to_thread(client.read_until_tcp_close)
    finally:
        client.sock.close()
