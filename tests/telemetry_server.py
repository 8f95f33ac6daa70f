"""A real telemetry receiver on 127.0.0.1 for push tests (and watch's webhook): it keeps events by
id (dropping resends, as a service should), counts every delivery, keeps every request's body,
path and headers, and fails on purpose: HTTP 500, or the connection dropped before or after it
stored the batch; or answers its first requests from a script (a status each; a 3xx redirects).
Given ``require``, it answers 401 to a request without those headers, with a body that echoes
the Authorization header it got, as a careless service might."""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FATES = ("ok", "error_500", "drop_before", "drop_after")


class Receiver:
    def __init__(self, failure_rate: float = 0.0, seed: int = 0, delay: float = 0.0, status: int | None = None,
                 require: dict[str, str] | None = None, script: list[int] | None = None):
        self.failure_rate = failure_rate
        self.rng = random.Random(seed)
        self.delay = delay
        self.status = status  # answer every request with this status (e.g. 400, 500)
        self.lock = threading.Lock()
        self.accepted: dict[str, dict] = {}  # event id -> event, first delivery kept
        self.deliveries: Counter = Counter()  # event id -> batches that reached storage
        self.fates: Counter = Counter()
        self.after_drop: Counter = Counter()  # event id -> stored, but the client never heard
        self.bodies: list[bytes] = []
        self.require = require or {}
        self.headers: list[dict[str, str]] = []  # each request's headers, names in lower case
        self.paths: list[str] = []
        self.script = list(script or [])  # statuses answered to the first requests, in order
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1/events"

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _fate(self) -> str:
        with self.lock:
            if self.rng.random() >= self.failure_rate:
                return "ok"
            return self.rng.choice(FATES[1:])

    def _store(self, body: bytes, fate: str) -> tuple[int, int]:
        events = json.loads(body).get("events", [])  # a watch's alert is one JSON object
        new = 0
        with self.lock:
            for event in events:
                self.deliveries[event["event_id"]] += 1
                if fate == "drop_after":
                    self.after_drop[event["event_id"]] += 1
                if event["event_id"] not in self.accepted:
                    self.accepted[event["event_id"]] = event
                    new += 1
        return new, len(events) - new

    def _handler(self):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                with receiver.lock:
                    receiver.bodies.append(body)
                    receiver.headers.append({name.lower(): value for name, value in self.headers.items()})
                    receiver.paths.append(self.path)
                    scripted = receiver.script.pop(0) if receiver.script else None
                time.sleep(receiver.delay)
                if any(self.headers.get(name) != value for name, value in receiver.require.items()):
                    self._answer(401, f"unauthorized: got {self.headers.get('authorization')!r}".encode())
                    return
                if scripted is not None and 300 <= scripted < 400:
                    self.send_response(scripted)
                    self.send_header("location", self.path + "/moved")
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                if scripted is not None or receiver.status is not None:
                    self.send_error(scripted or receiver.status)
                    return
                fate = receiver._fate()
                with receiver.lock:
                    receiver.fates[fate] += 1
                if fate == "error_500":
                    self.send_error(500)
                    return
                if fate == "drop_before":
                    self.close_connection = True
                    return
                new, duplicates = receiver._store(body, fate)
                if fate == "drop_after":
                    self.close_connection = True
                    return
                self._answer(200, json.dumps({"accepted": new, "duplicates": duplicates}).encode())

            def _answer(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", "application/json" if status == 200 else "text/plain")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler
