"""What each score row keeps of its envelope beside its session's (store/envelope_rows.py),
decided for a batch's (session, envelope) pairs at once: an envelope's own time is read once
however many sessions' rows share it (a run log's batch holds a pair a record), and what is
stored is what comparing pair by pair stored."""

from __future__ import annotations

import json

from sqlalchemy import text

from council_db.contract.envelope import Envelope
from council_db.contract.timestamps import timestamp_us
from council_db.ingest.lines import LineBatch
from council_db.ingest.normalise import Normaliser
from council_db.store.writer import ScoreWriter
from tests.conftest import session

FIRST, LATER = "2025-12-17T10:30:00.123456+00:00", "2025-12-17T10:31:05.000100+00:00"


def _batch(lines: list[dict]):
    return Normaliser().normalise(LineBatch(1, [json.dumps(line).encode() for line in lines], 0)).rows


def _sessions(sessions: int, *, later: bool) -> list[dict]:
    """The sessions' first reviewer's records at FIRST, or the other's at LATER; the last
    session's last record in another config version too (an envelope row of its own)."""
    lines = []
    for number in range(sessions):
        made = session(f"s{number:02d}", models=2, reviewers=2)
        lines += [dict(line, timestamp=LATER) for line in made[2:]] if later else made[:2]
    if later:
        lines[-1]["council_config_version"] = "0.2.0"
    return lines


def test_an_envelopes_own_time_is_read_once_however_many_sessions_share_it(db, monkeypatch):
    """The sessions' later records come in a batch of their own: one envelope at LATER for all
    of them, which differs from each stored session's only in its time."""
    asked: list[str] = []
    own_time = Envelope.own_time

    def counted(self: Envelope, given: str) -> int | None:
        asked.append(given)
        return own_time(self, given)

    first, later = _batch(_sessions(30, later=False)), _batch(_sessions(30, later=True))
    monkeypatch.setattr(Envelope, "own_time", counted)  # the writer's asks, not the reader's
    with db.bulk_writer() as connection:
        writer = ScoreWriter(connection)
        assert writer.write(first, None) == 60 and writer.write(later, None) == 60
        stored = connection.execute(text(
            "SELECT s.timestamp, c.ts_us, e.council_config_version, e.timestamp, count(*) FROM scores c "
            "JOIN sessions s ON s.id = c.session_id LEFT JOIN record_envelopes e ON e.id = c.envelope_id "
            "GROUP BY 1, 2, 3, 4 ORDER BY 5")).fetchall()
    assert asked == [LATER]
    assert stored == [(FIRST, None, "0.2.0", LATER, 1), (FIRST, timestamp_us(LATER), None, None, 59),
                      (FIRST, None, None, None, 60)]
