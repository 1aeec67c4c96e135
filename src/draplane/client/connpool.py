"""`ConnectionPool`: keep-alive HTTPS connections to the API servers, that one `HTTPTransport`
owns or several share.

Each transport sends its own credentials (its bearer token) on every request, so transports of
different users can share one pool: thousands of simulated kubelets in one process then hold
one TLS context and reuse each other's idle connections instead of opening their own. A watch
holds its connection for as long as it runs, so watches have connections of their own (one
aiohttp ClientSession without a limit), apart from the requests' (a session of at most
`REQUEST_CONNECTIONS`, `SHARED_REQUEST_CONNECTIONS` when shared, where requests beyond it wait
for a free one): 5,000 kubelets hold 5,000 watch connections and share at most 256 for their
status writes and Lease renewals, where upstream kubelets each multiplex both over one HTTP/2
connection. TLS client certificates are a
property of the connection, not of the request: a config with one gets a pool of its own.
"""

from __future__ import annotations

import ssl

import aiohttp

from draplane.client.kubeconfig import KubeConfig

REQUEST_CONNECTIONS = 64
"""Connections a transport's own pool keeps for requests other than watches (aiohttp's
connector limit)."""
SHARED_REQUEST_CONNECTIONS = 256
"""The same for a shared pool."""

# sock_connect, not connect: aiohttp's connect timeout also counts the wait for a free
# connection of the pool, so a burst of requests (a scheduler binding hundreds of pods) would
# fail as "Connection timeout" while the server is up; establishing a connection stays bounded.
REQUEST_TIMEOUT = aiohttp.ClientTimeout(total=60, sock_connect=10)


class ConnectionPool:
    """Two aiohttp ClientSessions against `config`'s servers, one for requests and one for
    watches, sharing one TLS context; each opened on first use."""

    def __init__(
        self, config: KubeConfig, *, user_agent: str = "draplane", shared: bool = False
    ) -> None:
        """`shared`: for several transports (see the module docstring)."""
        if shared and config.client_cert_pem:
            raise ValueError("a pool with a TLS client certificate cannot be shared")
        self.config = config
        self.shared = shared
        self._headers = {"Accept": "application/json", "User-Agent": user_agent}
        self._request_limit = SHARED_REQUEST_CONNECTIONS if shared else REQUEST_CONNECTIONS
        self._ssl: ssl.SSLContext | bool | None = None
        self._sessions: list[aiohttp.ClientSession | None] = [None, None]
        """The requests' session and the watches' session."""

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

    def session(self, *, watch: bool = False) -> aiohttp.ClientSession:
        """The session for requests, or for watches (`watch`), opened on first use."""
        index = 1 if watch else 0
        session = self._sessions[index]
        if session is None or session.closed:
            if self._ssl is None:
                self._ssl = self.config.ssl_context()
            connector = aiohttp.TCPConnector(
                ssl=self._ssl, limit=0 if watch else self._request_limit
            )
            session = self._sessions[index] = aiohttp.ClientSession(
                base_url=None,
                connector=connector,
                headers=self._headers,
                timeout=REQUEST_TIMEOUT,
                # The API server sets no cookies: skip the jar's work on every request.
                cookie_jar=aiohttp.DummyCookieJar(),
            )
        return session

    async def close(self) -> None:
        for index, session in enumerate(self._sessions):
            if session is not None:
                await session.close()
                self._sessions[index] = None
