"""`council-db watch`'s alerts to a webhook: one POST per alert, through push's machinery (the
credentials of push_auth, one deadline per request and the answer's status only from push_http,
push's retries of a transient failure with backoff, no redirect followed).

Each alert is reported accepted (``accepted``) as soon as the webhook answered 2xx, so the
caller remembers it then; an alert the webhook never took raises Undelivered, and what was not
remembered is sent again by the next run: at-least-once, each alert with its content's id. The
webhook's URL is named by its host alone in every message: a Slack webhook's path is its secret.
"""

from __future__ import annotations

import time
from typing import Callable
from urllib.parse import urlparse

from council_db.counted_text import counted
from council_db.errors import CouncilDbError
from council_db.outlets.push import PushSettings, Refused, deliver, request_headers
from council_db.outlets.push_auth import Credentials


class Undelivered(CouncilDbError):
    """An alert the webhook did not take: the watch's state stays as it was, to send it again."""

    exit_code = 3


def host(url: str) -> str:
    """How a message names the webhook: its host, never its path or query."""
    return urlparse(url).hostname or "the webhook"


def send(url: str, bodies: list[bytes], credentials: Credentials, settings: PushSettings,
         accepted: Callable[[int], None], sleep: Callable[[float], None] = time.sleep) -> int:
    """POST each body in turn, telling ``accepted`` its index once the webhook took it; returns
    the requests made."""
    from council_db.outlets.push_http import Poster

    requests = 0
    with Poster(url, request_headers(credentials), settings.timeout) as poster:
        for index, body in enumerate(bodies):
            left = f"{len(bodies) - index:,} of {counted(len(bodies), 'alert')} not delivered"
            try:
                error, made = deliver(poster, body, credentials, settings, sleep)
            except Refused as refused:
                raise Undelivered(f"{host(url)} refused an alert: {refused}; {left}, left due for the next "
                                  "council-db watch (fix the webhook first)") from None
            requests += made
            if error is not None:
                said = credentials.redact(error).replace(url, host(url))
                raise Undelivered(f"{host(url)}: gave up after {made} attempts ({said}); "
                                  f"{left}, left due for the next council-db watch")
            accepted(index)
    return requests
