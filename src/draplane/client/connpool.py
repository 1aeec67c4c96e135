"""`ConnectionPool`: keep-alive HTTPS connections to the API servers, one aiohttp
ClientSession, that one `HTTPTransport` owns or several share.

Each transport sends its own credentials (its bearer token) on every request, so transports of
different users can share one pool: thousands of simulated kubelets in one process then hold
one TLS context and reuse each other's idle connections instead of opening their own, as
upstream kubelets each multiplex their requests over one HTTP/2 connection. A watch holds its
connection for as long as it runs, so a shared pool has no connection limit (an owned one keeps
64). TLS client certificates are a property of the connection, not of the request: a config
with one gets a pool of its own.
"""

from __future__ import annotations

import aiohttp

from draplane.client.kubeconfig import KubeConfig

OWNED_LIMIT = 64
"""Connections of a transport's own pool (aiohttp's connector limit)."""

# sock_connect, not connect: aiohttp's connect timeout also counts the wait for a free
# connection of the pool, so a burst of requests (a scheduler binding hundreds of pods) would
# fail as "Connection timeout" while the server is up; establishing a connection stays bounded.
REQUEST_TIMEOUT = aiohttp.ClientTimeout(total=60, sock_connect=10)


class ConnectionPool:
    """One aiohttp ClientSession against `config`'s servers, opened on first use."""

    def __init__(
        self, config: KubeConfig, *, user_agent: str = "draplane", shared: bool = False
    ) -> None:
        """`shared`: for several transports (no connection limit; see the module docstring)."""
        if shared and config.client_cert_pem:
            raise ValueError("a pool with a TLS client certificate cannot be shared")
        self.config = config
        self.shared = shared
        self._headers = {"Accept": "application/json", "User-Agent": user_agent}
        self._session: aiohttp.ClientSession | None = None

    def check_shareable(self, config: KubeConfig) -> None:
        """ValueError unless `config` talks to this pool's servers with its trust and no
        client certificate, so its requests can go over this pool's connections."""
        mine = self.config
        if not self.shared:
            raise ValueError("this connection pool belongs to one transport")
        if config.client_cert_pem:
            raise ValueError(f"user {config.user}: a TLS client certificate needs its own pool")
        if (config.endpoints, config.ca_pem, config.insecure) != (
            mine.endpoints,
            mine.ca_pem,
            mine.insecure,
        ):
            raise ValueError(f"user {config.user}: not the servers and trust of the shared pool")

    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(
                ssl=self.config.ssl_context(), limit=0 if self.shared else OWNED_LIMIT
            )
            self._session = aiohttp.ClientSession(
                base_url=None,
                connector=connector,
                headers=self._headers,
                timeout=REQUEST_TIMEOUT,
                # The API server sets no cookies: skip the jar's work on every request.
                cookie_jar=aiohttp.DummyCookieJar(),
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
