"""A judge log's Unix times: the microseconds ``datetime.fromtimestamp(t, timezone.utc)`` rounds
them to, whose text is exactly what its isoformat() writes (the stored timestamp, and so
export's line); a reader hands the number, and the normaliser stores it without text."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone

import pytest

from council_db.contract import envelope as envelope_module
from council_db.contract.fields import LineError
from council_db.contract.timestamps import EPOCH
from council_db.ingest.formats.judge_lines import iso_time, unix_us
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.formats.readers import reader
from council_db.ingest.lines import LineBatch
from council_db.ingest.normalise import Normaliser
from council_db.ingest.sources import Source

HALVES = (0.0, 5e-7, 1.5e-6, 0.4999995, 0.9999995, 0.9999999, 0.123456)  # microseconds rounded half to even


def _as_datetime_writes_it(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, tz=timezone.utc).isoformat()


def _as_datetime_rounds_it(seconds: float) -> int:
    return (datetime.fromtimestamp(seconds, tz=timezone.utc) - EPOCH) // timedelta(microseconds=1)


def test_gradings_seconds_apart_are_the_microseconds_datetime_rounds_them_to():
    rng = random.Random(7)
    times = [1.7e9 + rng.randrange(600) + rng.choice(HALVES) for _ in range(2_000)]
    assert [unix_us("tstamp", t) for t in times] == [_as_datetime_rounds_it(t) for t in times]
    assert [iso_time("tstamp", t) for t in times] == [_as_datetime_writes_it(t) for t in times]


def _grading(number: int, question: int) -> bytes:
    return json.dumps({"question_id": question, "model": f"model-{number}", "judge": ["gpt-4", "single-v1"],
                       "score": 7, "turn": 1, "tstamp": 1.7e9 + number * 1.25}).encode()


def test_a_gradings_time_reaches_its_row_as_a_number_without_iso_text(monkeypatch):
    """Every grading of fastchat-single has its own time: the reader hands it as UTC
    microseconds, a new session's envelope writes it as text once, and no time is parsed
    from text (timestamp_us) or checked against its text (own_time)."""
    def parsed(*_):
        raise AssertionError("a time was parsed from text")
    monkeypatch.setattr(envelope_module, "timestamp_us", parsed)
    monkeypatch.setattr(envelope_module.Envelope, "own_time", parsed)
    read = reader(FormatOptions("fastchat-single"), Source("judged.jsonl", "stream", None, None))
    lines = [_grading(number, 81 + number % 2) for number in range(6)]
    rows = Normaliser(read).normalise(LineBatch(1, lines, 0)).rows
    own = [int(time) for time in rows.times.tolist()]
    expected = [_as_datetime_rounds_it(1.7e9 + number * 1.25) for number in range(6)]
    assert [envelope.ts_us for envelope in rows.first_envelopes()] == expected[:2]  # each session's first grading
    assert [envelope.timestamp for envelope in rows.first_envelopes()] == [
        _as_datetime_writes_it(1.7e9 + number * 1.25) for number in range(2)]
    assert own[2:] == expected[2:]  # the later gradings: a number each beside their session's envelope


@pytest.mark.parametrize("seconds", [0.0, 5e-7, 59.9999999, 1e-300, 253402299999.9999, 253402300799.0,
                                     *(random.Random(3).uniform(0, 2.5e11) for _ in range(200))])
def test_any_time_from_1970_to_9999_is_written_as_datetime_writes_it(seconds):
    assert unix_us("tstamp", seconds) == _as_datetime_rounds_it(seconds)
    assert iso_time("tstamp", seconds) == _as_datetime_writes_it(seconds)


@pytest.mark.parametrize("seconds", [float("nan"), float("inf"), 1e20])
def test_a_time_no_date_holds_names_its_field(seconds):
    with pytest.raises(LineError) as error:
        unix_us("tstamp", seconds)
    assert error.value.field == "tstamp"
