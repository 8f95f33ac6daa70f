"""One POST of council-db push: the status of the endpoint's answer, within one deadline.

Only the status decides what becomes of a batch, so the answer's body is never read: a huge
or endless answer costs no memory and no time. The deadline (--timeout) bounds the whole
request, from connecting to the status line; httpx's own timeouts bound each read, which a
server trickling a byte at a time never trips. httpx cancels an async request cleanly, so the
POST runs on an event loop of the Poster's own, one for the whole push (an answer left unread
closes its connection: each batch opens one).
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx


def status_line(status: int) -> str:
    """``HTTP 401 Unauthorized``: the standard reason for the code, never the server's own
    (its reason phrase, like its body, may echo a credential in a form no mask knows)."""
    return f"HTTP {status} {httpx.codes.get_reason_phrase(status)}".strip()


class Poster:
    """POSTs to one endpoint with the given headers, each bounded by ``timeout`` seconds as a
    whole. Use it in a ``with`` block; ``post`` raises TimeoutError past the deadline and
    httpx.TransportError when the connection fails."""

    def __init__(self, endpoint: str, headers: dict[str, str], timeout: float) -> None:
        self.endpoint = endpoint
        self.timeout = timeout
        self._headers = headers
        self._runner = asyncio.Runner()
        self._client: httpx.AsyncClient | None = None

    def __enter__(self) -> Poster:
        self._client = httpx.AsyncClient(headers=self._headers, follow_redirects=False, timeout=None)
        return self

    def __exit__(self, *_exc: Any) -> None:
        try:
            if self._client is not None:
                self._runner.run(self._client.aclose())
        finally:
            self._runner.close()

    def post(self, body: bytes) -> int:
        """The status of the endpoint's answer to ``body``."""
        return self._runner.run(self._status(body))

    async def _status(self, body: bytes) -> int:
        assert self._client is not None, "Poster is used in a with block"
        async with asyncio.timeout(self.timeout):
            async with self._client.stream("POST", self.endpoint, content=body) as response:
                return response.status_code  # leaving the block closes the answer unread
