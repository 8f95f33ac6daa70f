"""A new session whose envelope differs from one made before only in its time takes that one at
its time (contract/envelope.Envelope.at), not an envelope made from its record again: the same
envelopes, rows and refusals as from each session's record, on llm-council's lines (categories,
languages and versions apart, an undated line, a time no envelope can hold)."""

from __future__ import annotations

import io
import json

from council_db.contract.envelope import envelope
from council_db.ingest import normalise
from council_db.ingest.lines import LineBatch
from council_db.ingest.normalise import Normaliser
from council_db.simulate import SimulationConfig, write_jsonl


def lines() -> list[bytes]:
    out = io.BytesIO()
    write_jsonl(SimulationConfig(sessions=80, seed=11), out)
    found = out.getvalue().splitlines()
    for number in range(0, len(found), 16 * 7):  # every seventh session: other metadata, version or time
        line = json.loads(found[number])
        change = number // (16 * 7) % 4
        if change == 0:
            line["query_metadata"] = {"category": "math", "language": "de", "extra": 1}
        elif change == 1:
            line["schema_version"] = "1.1.0"
        elif change == 2:
            line["timestamp"] = "2026-02-30T10:00:00+00:00"
        else:
            line["timestamp"] = ""
        line["session_id"] += "-changed"
        found[number] = json.dumps(line).encode()
    return found


def rests(given: list[bytes]) -> set[tuple]:
    """What sets the sessions' envelopes apart besides their times (and a time's form)."""
    found = set()
    for line in map(json.loads, given):
        time = line["timestamp"]
        found.add((json.dumps(line["query_metadata"]), line["schema_version"], line["consent_level"],
                   line["council_config_version"], line["query_hash"], time[10:11]))
    return found


def normalised(given: list[bytes], size: int = 50) -> list[tuple]:
    normaliser = Normaliser()
    parts = [normaliser.normalise(LineBatch(start + 1, given[start:start + size], 0))
             for start in range(0, len(given), size)]
    return [(part.rows.session_keys, part.rows.envelopes, part.rows.envelope.tolist(), part.rows.session.tolist(),
             [(r.line_number, r.field, r.reason) for r in part.rejected]) for part in parts]


def test_new_sessions_envelopes_are_their_records_own_without_one_made_from_each(monkeypatch):
    given = lines()
    made = []
    monkeypatch.setattr(normalise, "envelope", lambda record: made.append(record) or envelope(record))
    fast = normalised(given)
    monkeypatch.setattr(normalise.Normaliser, "_made", lambda self, key, form, time, record: envelope(record()))
    each = normalised(given)

    assert fast == each
    assert any(part[4] for part in fast)  # the time no envelope holds is refused as before
    assert len(made) == len(rests(given)) < len({key for part in fast for key in part[0]}) // 3
