"""A record's own time kept as a number (revision 0018) must give back its text exactly: only
text that is that number's own ISO form, in its envelope's form, is taken as a number."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from council_db.contract.envelope import Envelope
from council_db.contract.timestamps import MAX_US, MIN_US, time_text, timestamp_us

FIRST = Envelope("2025-12-17T10:30:00.123456+00:00", 1765967400123456, 1, "1.0.0", None, None, None, None, None,
                 None, None, False)


@pytest.mark.parametrize("ts_us", [MIN_US, -1, 1, 1765967400123456, 1765967400000000, MAX_US])
def test_a_time_reads_as_pythons_own_iso_text_in_utc_with_either_separator(ts_us):
    moment = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=ts_us)
    assert time_text(ts_us, "2025-12-17T10") == moment.isoformat()
    assert time_text(ts_us, "2025-12-17 10") == moment.isoformat(" ")
    assert timestamp_us(time_text(ts_us, "x")) == ts_us


def test_only_a_times_own_form_in_the_envelopes_form_is_kept_as_a_number():
    assert FIRST.own_time("2025-12-18T00:00:00.500000+00:00") == 1766016000500000
    assert FIRST.with_time(1766016000500000).timestamp == "2025-12-18T00:00:00.500000+00:00"
    for text in ("2025-12-18T00:00:00.5+00:00", "2025-12-18T00:00:00Z", "2025-12-18 00:00:00+00:00",
                 "2025-12-18T01:00:00+01:00", "2025-12-18T00:00:00", "", "1970-01-01T00:00:00+00:00"):
        assert FIRST.own_time(text) is None, text  # the epoch: pg_copy's NULL marker
