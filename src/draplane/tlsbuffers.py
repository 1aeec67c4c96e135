"""The read buffer of asyncio's TLS transport, as every draplane command sets it.

asyncio's `SSLProtocol` (Python 3.11+) gives every TLS connection a read buffer of its own,
allocated and zero-filled when the connection opens: 256 KiB by default (`max_size`), resident
for as long as the connection lives, on each side. A control plane holds one long-lived
connection per watch, on the server and on the client: with 1,000 simulated kubelets the API
server and the nodes process each spent about 300 KiB per connection
(docs/benchmarks-history.md, "TLS read buffers"), most of it this buffer.

`READ_BUFFER_BYTES` of 32 KiB holds two full TLS records (16 KiB of plaintext each), so a
read still takes whole records off the socket; reading a 50 MB response costs the same CPU as
with 256 KiB. No asyncio API sets the size per connection: it is the class attribute the
buffer is allocated from, set once per process before connections open.

This is asyncio's own loop (`DRAPLANE_EVENT_LOOP=asyncio`, `draplane.eventloop`). uvloop's TLS
transport, the default, mallocs its read buffer without filling it, so only the pages a read
touches become resident.
"""

from __future__ import annotations

from asyncio import sslproto

READ_BUFFER_BYTES = 32 * 1024


def configure(read_buffer_bytes: int = READ_BUFFER_BYTES) -> None:
    """Make every TLS connection opened from now on in this process read into a buffer of
    `read_buffer_bytes`."""
    if read_buffer_bytes < 16 * 1024:
        raise ValueError("the TLS read buffer must hold a whole record (16 KiB)")
    sslproto.SSLProtocol.max_size = read_buffer_bytes


def read_buffer_bytes() -> int:
    """The read buffer size of TLS connections opened now."""
    return int(sslproto.SSLProtocol.max_size)
