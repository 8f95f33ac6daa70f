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


def test_an_envelope_at_another_time_is_the_one_its_fields_would_make_and_keeps_no_cached_digest():
    """with_time and at copy the envelope's fields at once: what the constructor makes of the
    same fields at that time, its stored columns and digest those of the new time, the
    original untouched."""
    assert FIRST.digest  # cached on the original before the copy
    fields = [getattr(FIRST, name) for name in ("consent_level", "schema_version", "schema_version_raw",
                                                "council_config_version", "query_hash", "query_metadata", "category",
                                                "language", "length_bucket", "display_order")]
    for made in (FIRST.with_time(1766016000500000), FIRST.at(1766016000500000),
                 FIRST.at("2025-12-18T00:00:00.500000+00:00")):
        expected = Envelope("2025-12-18T00:00:00.500000+00:00", 1766016000500000, *fields)
        assert made == expected and vars(made) == vars(expected) and made.stored == expected.stored
        assert made.digest == expected.digest != FIRST.digest
    assert FIRST.timestamp == "2025-12-17T10:30:00.123456+00:00" and FIRST.stored[0] == FIRST.timestamp


def _by_parsing(text: str) -> int | None:
    """own_time as it was before a minute was read once: each text parsed and written back."""
    ts_us = timestamp_us(text)
    return ts_us if ts_us and time_text(ts_us, text) == text else None


def test_a_minutes_times_are_parsed_once_and_read_as_parsing_each_would(monkeypatch):
    import council_db.contract.envelope as envelope

    envelope._minute_us.cache_clear()
    parsed: list[str] = []
    monkeypatch.setattr(envelope, "timestamp_us", lambda text: parsed.append(text) or timestamp_us(text))
    texts = [time_text(1766016060000000 + second * 1_000_000 + fraction, "T") for second in range(60)
             for fraction in (0, 1, 999_999)]
    assert [FIRST.own_time(text) for text in texts] == [_by_parsing(text) for text in texts]
    assert len(parsed) == 1  # the minute's, once
    near = ["2025-12-18T00:01:60+00:00", "2025-12-18T00:01:05.000000+00:00", "2025-12-18T00:01:05,500000+00:00",
            "2025-12-18T00:01:05.5+00:00", "2025-12-18T00:01:0\u0665+00:00", "2025-12-18T00:01:-5+00:00",
            "1970-01-01T00:00:00+00:00", "1970-01-01T00:00:00.000001+00:00", "9999-12-31T23:59:59.999999+00:00"]
    for text in near:  # endings time_text never writes go the long way, and come out as before
        try:
            expected = _by_parsing(text)
        except ValueError:
            expected = ValueError
        try:
            got = FIRST.own_time(text)
        except ValueError:
            got = ValueError
        assert got == expected, text
