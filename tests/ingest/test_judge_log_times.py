"""A judge log's Unix times as text: exactly what ``datetime.fromtimestamp(t, timezone.utc)
.isoformat()`` writes (the stored timestamp, and so export's line), each minute's date made once."""

from __future__ import annotations

import random
from datetime import datetime, timezone

import pytest

from council_db.contract.fields import LineError
from council_db.ingest.formats import judge_lines
from council_db.ingest.formats.judge_lines import iso_time

HALVES = (0.0, 5e-7, 1.5e-6, 0.4999995, 0.9999995, 0.9999999, 0.123456)  # microseconds rounded half to even


def _as_datetime_writes_it(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, tz=timezone.utc).isoformat()


def test_a_minutes_gradings_are_written_as_datetime_writes_them_from_one_date():
    judge_lines._minute_text.cache_clear()
    rng = random.Random(7)
    times = [1.7e9 + rng.randrange(600) + rng.choice(HALVES) for _ in range(2_000)]
    assert [iso_time("tstamp", t) for t in times] == [_as_datetime_writes_it(t) for t in times]
    assert judge_lines._minute_text.cache_info().misses <= 11  # ten minutes (and one past a rounding up)


@pytest.mark.parametrize("seconds", [0.0, 5e-7, 59.9999999, 1e-300, 253402299999.9999, 253402300799.0,
                                     *(random.Random(3).uniform(0, 2.5e11) for _ in range(200))])
def test_any_time_from_1970_to_9999_is_written_as_datetime_writes_it(seconds):
    assert iso_time("tstamp", seconds) == _as_datetime_writes_it(seconds)


@pytest.mark.parametrize("seconds", [float("nan"), float("inf"), 1e20])
def test_a_time_no_date_holds_names_its_field(seconds):
    with pytest.raises(LineError) as error:
        iso_time("tstamp", seconds)
    assert error.value.field == "tstamp"
