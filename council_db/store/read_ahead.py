"""A streamed read's next chunks made by a thread while the caller works on the last one.

SQLite steps through its rows without the GIL, and numpy's arithmetic mostly without it too,
so on two cores a pass that reads a chunk and then reduces it can do both at once (the
every-session anomaly pass: docs/benchmarks.md). The thread uses the caller's connection
(opened for use from any thread, reading.py) while the caller only waits on the queue, and
is stopped and joined on leaving the ``with`` block, before the read transaction ends.
"""

from __future__ import annotations

import queue
import threading
from typing import Generic, Iterator, TypeVar

T = TypeVar("T")
DEPTH = 2  # chunks made ahead: the memory of two more chunks, enough to keep the reader busy
POLL_S = 0.05  # how often a producer waiting on a full queue looks whether it was stopped


class _End:
    """The producer's last item: its iterator ran out, or raised ``error``."""

    def __init__(self, error: BaseException | None = None):
        self.error = error


class ReadAhead(Generic[T]):
    """``items`` iterated by a thread, at most DEPTH ahead of the consumer, in their order; an
    exception of the producer's raised to the consumer where that item would have been."""

    def __init__(self, items: Iterator[T], depth: int = DEPTH):
        self._items = items
        self._queue: queue.Queue[T | _End] = queue.Queue(maxsize=depth)
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._produce, name="council-db read-ahead", daemon=True)

    def __enter__(self) -> ReadAhead[T]:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped.set()
        while self._thread.is_alive():  # drain, so that a producer blocked on a full queue sees the stop
            try:
                self._queue.get(timeout=POLL_S)
            except queue.Empty:
                pass
        self._thread.join()

    def __iter__(self) -> Iterator[T]:
        while not isinstance(item := self._queue.get(), _End):
            yield item
        if item.error is not None:
            raise item.error

    def _produce(self) -> None:
        end = _End()
        try:
            for item in self._items:
                if not self._put(item):
                    return
        except BaseException as error:  # noqa: BLE001 - handed to the consumer, which raises it
            end = _End(error)
        self._put(end)

    def _put(self, item: T | _End) -> bool:
        """Queue ``item``, waiting for room; False once the consumer stopped."""
        while not self._stopped.is_set():
            try:
                self._queue.put(item, timeout=POLL_S)
                return True
            except queue.Full:
                continue
        return False
