"""council-db push: session summaries to a team service, through an outbox.

1. Every eligible session's event (push_events.py) is written to ``outbox_events`` for
   the endpoint, unless that endpoint already has that event id: one committed transaction.
2. Pending events go out in batches (``{"events": [...]}``, one POST each). A batch is
   marked sent, and committed, only after the endpoint answered 2xx.

Guarantee: at-least-once delivery, and every event carries an id derived from its content.
A push that fails or is killed resumes where it stopped; the only event that can arrive
twice is one whose batch the endpoint accepted just before the push died (or whose answer
was lost), and it arrives with the same id, so a receiver that keeps event ids sees each
event exactly once. An event marked sent is never sent to that endpoint again.

Transient failures (connection errors, timeouts, HTTP 408/425/429/5xx) are retried with
exponential backoff and jitter; any other answer stops the push with its status. Only the
status of an answer is used, kept and shown (push_http.py): its body is never read, so
nothing a service echoes can reach the outbox or a message. Redirects are not followed
(credentials go to the endpoint named, nowhere else). Credentials (push_auth.py) are sent
as headers and masked in any connection error kept or shown.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable
from urllib.parse import urlparse

from council_db import __version__
from council_db.errors import CouncilDbError, UsageError
from council_db.ingest.importer import now_utc
from council_db.outlets.push_auth import TOKEN_ENV, Credentials
from council_db.outlets.push_events import Built, build_events
from council_db.store.database import Database

if TYPE_CHECKING:
    from council_db.outlets.push_http import Poster

RETRY_STATUSES = {408, 425, 429, 500, 502, 503, 504}
MAX_BACKOFF_SECONDS = 30.0


@dataclass
class PushSettings:
    batch_size: int = 100
    retries: int = 5  # after the first attempt
    backoff: float = 0.5  # seconds before the first retry; doubled each time
    timeout: float = 10.0  # seconds for a whole request, from connecting to the answer's status


class Refused(CouncilDbError):
    """An answer that retrying cannot change; ``status`` is its status line, all the outbox keeps."""

    def __init__(self, message: str, status: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class PushResult:
    queued: int = 0  # events new to the outbox in this run
    sent: int = 0
    requests: int = 0
    pending: int = 0  # left in the outbox (0 when the push completed)
    below_consent: int = 0  # sessions
    without_scores: int = 0
    records_held_back: int = 0  # records below consent level 2, in sessions sent or not


NO_CREDENTIALS = Credentials()


def check_endpoint(endpoint: str, option: str = "--endpoint") -> str:
    """The URL, refused (naming ``option``) unless it is http(s) without a user name or password."""
    parsed = urlparse(endpoint)
    if "@" in parsed.netloc:  # the message leaves the URL out: it holds a password
        raise UsageError(f"{option}: a user name or password in the URL would stay in shell history and in the "
                         f"database; give a token with ${TOKEN_ENV} or --token-file instead")
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise UsageError(f"{option}: not an http(s) URL ({_what_is_wrong(parsed.scheme)}); "
                         "give e.g. https://telemetry.example/v1/events")
    return endpoint


def _what_is_wrong(scheme: str) -> str:
    """What is wrong with a URL, without its path: a webhook's path is its secret, and a
    mistyped one would otherwise be printed into CI logs."""
    if scheme in ("http", "https"):
        return "it has no host"
    return f"its scheme is {scheme!r}" if scheme else "it does not start with http:// or https://"


def enqueue(db: Database, endpoint: str, built: Built) -> int:
    """Write the events the endpoint does not have yet; returns how many were new."""
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    from council_db.store.models import OutboxEvent

    if not built.events:
        return 0
    table = OutboxEvent.__table__
    rows = [dict(endpoint=endpoint, event_id=e.event_id, session_id=e.session_row, payload=e.payload,
                 created_at=now_utc(), attempts=0) for e in built.events]
    if db.dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgres_insert

        statement = postgres_insert(table).on_conflict_do_nothing(index_elements=["endpoint", "event_id"])
    else:
        statement = sqlite_insert(table).on_conflict_do_nothing(index_elements=["endpoint", "event_id"])
    with db.writer() as connection:
        new = sum(connection.execute(statement, rows[i:i + 500]).rowcount for i in range(0, len(rows), 500))
        connection.commit()
    return new


def pending(db: Database, endpoint: str) -> list[tuple[int, str]]:
    """(outbox id, payload) of the events not yet accepted by the endpoint, oldest first."""
    from sqlalchemy import select

    from council_db.store.models import OutboxEvent

    with db.engine.connect() as connection:
        return [tuple(row) for row in connection.execute(
            select(OutboxEvent.id, OutboxEvent.payload)
            .where(OutboxEvent.endpoint == endpoint, OutboxEvent.sent_at.is_(None)).order_by(OutboxEvent.id))]


def _update(db: Database, ids: list[int], **values) -> None:
    from sqlalchemy import update

    from council_db.store.models import OutboxEvent

    with db.writer() as connection:
        connection.execute(update(OutboxEvent).where(OutboxEvent.id.in_(ids)).values(**values))
        connection.commit()


def _record_failure(db: Database, ids: list[int], error: str) -> None:
    from council_db.store.models import OutboxEvent

    _update(db, ids, attempts=OutboxEvent.attempts + 1, last_error=error[:500])


def _post(poster: Poster, body: bytes, credentials: Credentials) -> str | None:
    """None when the endpoint accepted ``body``; else what went wrong, to retry (a status
    line, the deadline, a connection error with credentials masked). Raises Refused for an
    answer that retrying cannot change, its message the status line and what to check."""
    import httpx

    from council_db.outlets.push_http import status_line

    try:
        status = poster.post(body)
    except TimeoutError:
        return f"no answer within {poster.timeout:g} s"
    except httpx.TransportError as error:  # refused, reset, dropped
        return credentials.redact(f"{type(error).__name__}: {error}" if str(error) else type(error).__name__)
    if 200 <= status < 300:
        return None
    line = status_line(status)
    if status in RETRY_STATUSES:
        return line
    raise Refused(f"{line}{_auth_hint(status, credentials)}", line)


def deliver(poster: Poster, body: bytes, credentials: Credentials, settings: PushSettings,
            sleep: Callable[[float], None],
            failed: Callable[[str], None] = lambda _error: None) -> tuple[str | None, int]:
    """POST ``body`` until the endpoint accepts it, retrying a transient failure (``failed`` is
    told each) with exponential backoff and jitter: (None, requests made) once accepted, or
    (the last error, requests made) when the retries ran out. Raises Refused as _post does."""
    error = None
    for attempt in range(settings.retries + 1):
        error = _post(poster, body, credentials)
        if error is None:
            return None, attempt + 1
        failed(error)
        if attempt < settings.retries:
            delay = min(MAX_BACKOFF_SECONDS, settings.backoff * 2 ** attempt)
            sleep(delay * (1 + random.random() / 4))
    return error, settings.retries + 1


def request_headers(credentials: Credentials) -> dict[str, str]:
    """What every POST carries: JSON, council-db's version, and the credentials."""
    return {"content-type": "application/json", "user-agent": f"council-db/{__version__}", **credentials.headers}


def _auth_hint(status: int, credentials: Credentials) -> str:
    if status not in (401, 403):
        return ""
    if credentials.headers:
        return f"; it did not accept the credentials from {credentials.source}"
    return f"; no credentials were given: set ${TOKEN_ENV}, or give --token-file or --header-env"


def send_pending(db: Database, endpoint: str, settings: PushSettings, sleep: Callable[[float], None] = time.sleep,
                 credentials: Credentials = NO_CREDENTIALS) -> tuple[int, int]:
    """Send the outbox's pending events in batches; returns (events sent, requests made)."""
    from council_db.outlets.push_http import Poster

    queue = pending(db, endpoint)
    sent = requests = 0
    with Poster(endpoint, request_headers(credentials), settings.timeout) as poster:
        for start in range(0, len(queue), settings.batch_size):
            batch = queue[start:start + settings.batch_size]
            ids = [row_id for row_id, _ in batch]
            body = ('{"events":[' + ",".join(payload for _, payload in batch) + "]}").encode()
            try:
                error, made = deliver(poster, body, credentials, settings, sleep,
                                      failed=lambda error: _record_failure(db, ids, error))
            except Refused as refused:
                _record_failure(db, ids, refused.status)
                raise Refused(f"{endpoint} refused the events: {refused}; they stay queued (fix the endpoint or "
                              "the service, then run council-db push again)", refused.status) from None
            requests += made
            if error is not None:
                left = len(queue) - sent
                raise CouncilDbError(f"{endpoint}: gave up after {settings.retries + 1} attempts ({error}); {sent} "
                                     f"events sent, {left} stay queued: run council-db push again")
            _update(db, ids, sent_at=now_utc(), last_error=None)
            sent += len(batch)
    return sent, requests


def push(db: Database, endpoint: str, *, since: str | None = None, until: str | None = None,
         settings: PushSettings | None = None, sleep: Callable[[float], None] = time.sleep,
         credentials: Credentials = NO_CREDENTIALS) -> PushResult:
    """Queue the window's eligible events, then send everything pending for the endpoint."""
    check_endpoint(endpoint)
    built = build_events(db, since=since, until=until)
    result = PushResult(queued=enqueue(db, endpoint, built), below_consent=built.below_consent,
                        without_scores=built.without_scores, records_held_back=built.records_held_back)
    result.sent, result.requests = send_pending(db, endpoint, settings or PushSettings(), sleep, credentials)
    result.pending = len(pending(db, endpoint))
    return result


def would_send(db: Database, endpoint: str | None = None, *, since: str | None = None,
               until: str | None = None) -> list[str]:
    """The payloads a push would send now, without writing anything: to ``endpoint``, those
    queued for it, then the window's it has not had; with no endpoint, every event of the window."""
    from sqlalchemy import select

    from council_db.store.models import OutboxEvent

    built = build_events(db, since=since, until=until)
    if endpoint is None:
        return [e.payload for e in built.events]
    check_endpoint(endpoint)
    with db.engine.connect() as connection:
        known = set(connection.scalars(select(OutboxEvent.event_id).where(OutboxEvent.endpoint == endpoint)))
    return [payload for _, payload in pending(db, endpoint)] + [
        e.payload for e in built.events if e.event_id not in known]
