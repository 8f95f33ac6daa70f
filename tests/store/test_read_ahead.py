"""store/read_ahead: a thread makes a streamed read's next chunks while the caller works on the
last one; the chunks arrive in order, a failure of the reader reaches the caller where its
chunk would have, and a caller that stops early leaves no thread reading behind it (the
every-session pass may stop at its first unseen reviewer, and then closes its transaction)."""

from __future__ import annotations

import threading
import time

import pytest

from council_db.store.read_ahead import DEPTH, ReadAhead


def test_the_chunks_arrive_in_order_made_on_another_thread():
    made_on = []

    def chunks():
        for number in range(50):
            made_on.append(threading.current_thread())
            yield number

    with ReadAhead(chunks()) as ahead:
        assert list(ahead) == list(range(50))
    assert set(made_on) == {made_on[0]} and made_on[0] is not threading.current_thread()


def test_the_readers_failure_is_raised_to_the_caller_after_the_chunks_before_it():
    def chunks():
        yield 1
        yield 2
        raise ValueError("a damaged string")

    got = []
    with pytest.raises(ValueError, match="a damaged string"), ReadAhead(chunks()) as ahead:
        for number in ahead:
            got.append(number)
    assert got == [1, 2]


def test_a_caller_that_stops_early_leaves_no_reader_running():
    made = []

    def chunks():
        for number in range(1_000):
            made.append(number)
            yield number

    before = threading.active_count()
    with ReadAhead(chunks()) as ahead:
        for number in ahead:
            if number == 3:
                break
        time.sleep(0.2)  # the reader runs ahead at most DEPTH chunks, then waits
        assert len(made) <= 4 + DEPTH + 1
    assert threading.active_count() == before and len(made) < 1_000
