"""What council-db push takes from an endpoint's answer: its status, and nothing else. Against
real servers on 127.0.0.1 that answer badly on purpose: a 401 whose body and reason phrase
echo the token in another form (only the status line is kept, in the outbox and the message),
a huge body (never read), and headers that trickle in a byte at a time (--timeout bounds the
whole request, not each read). And --dry-run needs no endpoint."""

from __future__ import annotations

import base64
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from council_db.errors import CouncilDbError, UsageError
from council_db.outlets.push import PushSettings, pending, push
from council_db.outlets.push_auth import Credentials
from tests.outlets.test_push import eligible_ids, simulated

TOKEN = "tok-5f1c9e7a2b-team-telemetry"
CREDENTIALS = Credentials({"Authorization": f"Bearer {TOKEN}"}, "a test", (TOKEN,))
ONCE = PushSettings(batch_size=100, retries=0, backoff=0, timeout=1)


@contextmanager
def answering(answer: Callable[[socket.socket], None]) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 that reads each request whole, then lets ``answer`` write
    what it likes to the socket; its URL."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            connection.settimeout(None)
            with connection:
                try:
                    _read_request(connection)
                    answer(connection)
                except OSError:  # the client went away
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1/events"
    finally:
        stop.set()
        thread.join(timeout=30)
        listener.close()


def _read_request(connection: socket.socket) -> None:
    data = _received(connection)
    while b"\r\n\r\n" not in data:
        data += _received(connection)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length"))
    while len(body) < length:
        body += _received(connection)


def _received(connection: socket.socket) -> bytes:
    data = connection.recv(65536)
    if not data:
        raise ConnectionResetError("the client closed the connection mid-request")
    return data


def token_forms() -> list[str]:
    return [TOKEN, base64.b64encode(f"Bearer {TOKEN}".encode()).decode(), TOKEN[::-1], TOKEN.upper()]


def echo_401(connection: socket.socket) -> None:
    """401 with the token, base64-encoded, in the reason phrase; the body holds it reversed and in capitals."""
    disguised = token_forms()
    body = f"unauthorized: {disguised[2]} {disguised[3]}".encode()
    connection.sendall(f"HTTP/1.1 401 Denied {disguised[1]}\r\ncontent-type: text/plain\r\n"
                       f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode() + body)


@pytest.fixture
def queued(db, tmp_path):
    """20 sessions that may be sent."""
    simulated(db, tmp_path, 20, 3, seed=7)
    return db


def outbox_errors(db) -> set[str | None]:
    with db.engine.connect() as connection:
        return {row[0] for row in connection.exec_driver_sql("SELECT last_error FROM outbox_events")}


def test_a_401_echoing_the_token_in_other_forms_leaves_only_its_status_line_in_the_outbox_and_message(queued):
    with answering(echo_401) as url, pytest.raises(CouncilDbError) as refused:
        push(queued, url, settings=ONCE, credentials=CREDENTIALS, sleep=lambda _: None)

    assert outbox_errors(queued) == {"HTTP 401 Unauthorized"}
    message = str(refused.value)
    assert "HTTP 401 Unauthorized" in message and "did not accept the credentials from a test" in message
    assert not [form for form in token_forms() if form in message]
    assert len(pending(queued, url)) == 20


def test_a_huge_answer_body_is_never_read(queued):
    """200 with a 256 MB body: the push is done at the status; the server gets to write no more
    than the sockets' buffers hold before the client hangs up."""
    written = []

    def huge(connection: socket.socket) -> None:
        connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 268435456\r\n\r\n")
        chunk = b"x" * (1 << 20)
        for _ in range(256):
            connection.sendall(chunk)
            written.append(len(chunk))

    with answering(huge) as url:
        result = push(queued, url, settings=ONCE, sleep=lambda _: None)

    assert result.sent == 20 and result.pending == 0
    assert sum(written) < 32 << 20, f"the server wrote {sum(written) >> 20} MB of its answer"


def test_the_timeout_bounds_the_whole_request_not_each_read(queued):
    """Headers that come a byte every 0.1 s (for at most 10 s): each read is quick, the request is not."""
    def trickle(connection: socket.socket) -> None:
        for byte in b"HTTP/1.1 200 OK\r\n" + b"x-slow: " + b"." * 100:
            connection.sendall(bytes([byte]))
            time.sleep(0.1)

    with answering(trickle) as url, pytest.raises(CouncilDbError) as gave_up:
        started = time.monotonic()
        try:
            push(queued, url, settings=ONCE, sleep=lambda _: None)
        finally:
            took = time.monotonic() - started

    assert took < 3, f"--timeout 1 took {took:.1f} s"
    assert "no answer within 1 s" in str(gave_up.value) and "20 stay queued" in str(gave_up.value)
    assert outbox_errors(queued) == {"no answer within 1 s"}


def test_dry_run_needs_no_endpoint_and_shows_every_event_that_would_go(queued, cli):
    done = cli("push", "--dry-run")

    assert done.exit_code == 0, done.output
    assert {json.loads(line)["event_id"] for line in done.stdout.splitlines()} == eligible_ids(queued)
    assert done.stderr == "dry run: 20 events would go; nothing was sent or queued\n"
    assert outbox_errors(queued) == set(), "nothing was queued"


def test_a_push_without_endpoint_or_dry_run_is_a_usage_error_naming_both(cli):
    done = cli("push")

    assert isinstance(done.exception, UsageError) and done.exception.exit_code == 2
    assert str(done.exception) == ("missing --endpoint URL (where to POST the events): give it, or --dry-run to "
                                   "see what would go")
