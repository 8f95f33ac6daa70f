"""Per-session summary events for a team telemetry service: what may leave the machine.

Only records at consent level >= 2, and per level only what llm-council's consent model
allows (ADR-018): 2 "anonymous" sends rankings; 3 "enhanced" adds the query metadata and
the bias indicators; 4 "research" adds the query hash. Consent belongs to each record, not
to its session: a session's event carries only its records that may leave the machine, at
the lowest level among them, and the session's query metadata and hash only when the
session's own envelope (its first record's) allows them too. Never raw text: the database holds
none, and an event is built from stored columns only.

Bias indicators are the per-session indicators of analysis/sessions/session_audit.py (length
correlation with its t-distribution p-value, variance of slot means) plus the reviewers' agreement
(Krippendorff's alpha, interval, self-reviews left out, one score per reviewer and answer).
4-5 answers cannot show a bias, so an event carries no statistical flag: its ``flags`` say why an indicator is missing.

The event id is a hash of the event's content: the same session summarised again gives
the same id, which is what lets a receiver drop a resent event.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.loading.window import Window, load_sessions
from council_db.analysis.sessions.session_audit import audit_data
from council_db.analysis.stats import answer_index, krippendorff_alpha_interval
from council_db.contract.timestamps import format_us
from council_db.store.database import Database
from council_db.store.sql_filters import RECORD_CONSENT

EVENT_TYPE = "council_session_summary"
EVENT_SCHEMA_VERSION = "1.0"
MIN_CONSENT = 2
ENHANCED = 3
RESEARCH = 4


@dataclass(frozen=True)
class SessionEvent:
    session_row: int  # sessions.id
    event_id: str
    payload: str  # JSON, exactly as sent


@dataclass
class Built:
    events: list[SessionEvent]
    below_consent: int  # sessions in the window none of whose records may leave the machine
    without_scores: int  # eligible sessions with no usable score
    records_held_back: int  # records in the window below consent level 2


def _record_levels(window_sql: str) -> str:
    """SQL: (session_id, level) of each record in the window, at the record's own consent level."""
    return (f"SELECT sc.session_id, {RECORD_CONSENT} AS level FROM scores AS sc "
            "JOIN sessions AS s ON s.id = sc.session_id LEFT JOIN record_envelopes AS e ON e.id = sc.envelope_id "
            f"WHERE sc.session_id IN ({window_sql})")


def _levels(db: Database, window_sql: str, params: dict) -> tuple[dict[int, int], int]:
    """Per session with records that may be sent, the lowest of their consent levels; and how
    many records in the window may not be sent."""
    from sqlalchemy import text

    query = text(f"SELECT r.session_id, MIN(CASE WHEN r.level >= {MIN_CONSENT} THEN r.level END), "
                 f"SUM(CASE WHEN r.level < {MIN_CONSENT} THEN 1 ELSE 0 END) "
                 f"FROM ({_record_levels(window_sql)}) AS r GROUP BY r.session_id")
    with db.engine.connect() as connection:
        rows = connection.execute(query, params).fetchall()
    return {row[0]: row[1] for row in rows if row[1] is not None}, sum(row[2] for row in rows)


def _envelopes(db: Database, window_sql: str, params: dict) -> dict[str, tuple]:
    from sqlalchemy import text

    query = text(f"SELECT s.session_key, s.id, s.consent_level, s.council_config_version, s.category, "
                 f"s.language, s.length_bucket, s.query_hash FROM sessions AS s WHERE s.id IN ({window_sql})")
    with db.engine.connect() as connection:
        return {row[0]: tuple(row[1:]) for row in connection.execute(query, params)}


def build_events(db: Database, *, since: str | None = None, until: str | None = None) -> Built:
    """Events for the eligible sessions between since and until (all when not given)."""
    window_sql, params = Window(since=since, until=until).session_query()
    envelopes = _envelopes(db, window_sql, params)
    levels, held_back = _levels(db, window_sql, params)
    eligible = (f"SELECT r.session_id AS id FROM ({_record_levels(window_sql)}) AS r "
                f"GROUP BY r.session_id HAVING MAX(r.level) >= {MIN_CONSENT}")
    data = load_sessions(db, eligible, params, min_consent=MIN_CONSENT)
    events = []
    for index, session in enumerate(_split(data)):
        key = data.session_keys[index]
        row_id, session_consent, config, category, language, bucket, query_hash = envelopes[key]
        level = levels[row_id]
        event: dict[str, Any] = {
            "event_type": EVENT_TYPE, "schema_version": EVENT_SCHEMA_VERSION, "session_id": key,
            "timestamp": format_us(int(data.session_ts_us[index])) if data.session_ts_us[index] >= 0 else None,
            "consent_level": level, "council_config_version": config, "score_scale": data.scale,
            "rankings": _rankings(session),
        }
        if level >= ENHANCED:
            event["bias_indicators"] = _indicators(session)
            if session_consent >= ENHANCED:
                event["query_metadata"] = {"category": category, "language": language, "length_bucket": bucket}
        if min(level, session_consent) >= RESEARCH and query_hash:
            event["query_hash"] = query_hash
        content = json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        event_id = hashlib.sha256(content.encode()).hexdigest()[:32]
        payload = json.dumps({"event_id": event_id, **event}, separators=(",", ":"), ensure_ascii=False)
        events.append(SessionEvent(row_id, event_id, payload))
    return Built(events, len(envelopes) - len(levels), len(levels) - len(events), held_back)


def _split(data: ScoreData) -> list[ScoreData]:
    """One ScoreData per session (records come grouped by session)."""
    bounds = np.searchsorted(data.session, np.arange(data.n_sessions + 1))
    return [ScoreData(
        session=np.zeros(hi - lo, dtype=np.int64), reviewer=data.reviewer[lo:hi], model=data.model[lo:hi],
        slot=data.slot[lo:hi], log_length=data.log_length[lo:hi], score=data.score[lo:hi],
        self_review=data.self_review[lo:hi], reviewers=data.reviewers, models=data.models,
        session_keys=[data.session_keys[s]], session_ts_us=data.session_ts_us[s:s + 1], scale=data.scale,
    ) for s, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:]))]


def _number(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else round(float(value), 6)


def _rankings(data: ScoreData) -> list[dict[str, Any]]:
    """Per reviewer, the answers it scored, best first (ties: earlier slot first)."""
    out = []
    for reviewer in sorted(set(data.reviewer.tolist()), key=lambda r: data.reviewers[r]):
        mine = np.flatnonzero(data.reviewer == reviewer)
        mine = sorted(mine, key=lambda i: (-data.score[i], data.slot[i], data.models[data.model[i]]))
        out.append({"reviewer_id": data.reviewers[reviewer], "ranking": [
            {"model_id": data.models[data.model[i]], "position": int(data.slot[i]) if data.slot[i] >= 0 else None,
             "score": _number(data.score[i]), "self_review": bool(data.self_review[i])} for i in mine]})
    return out


def _indicators(data: ScoreData) -> dict[str, Any]:
    audit = audit_data(data)
    flags = []
    if audit.length.r is None:
        flags.append("length_correlation_undefined")  # < 3 answers, or lengths or scores all equal
    if audit.position is None:
        flags.append("positions_not_display_order")  # schema < 1.2.0: positions are rankings
    others = ~data.self_review
    answer, _ = answer_index(data.session[others], data.model[others], data.log_length[others])
    alpha = (_number(krippendorff_alpha_interval(answer, data.score[others], rater=data.reviewer[others]))
             if others.any() else None)
    if alpha is None:
        flags.append("agreement_undefined")  # no answer scored by two different reviewers, or no variation
    return {
        "length_correlation": {"r": _number(audit.length.r), "p_value": _number(audit.length.p_value),
                               "answers": audit.length.answers},
        "position_variance": _number(audit.position.variance_of_slot_means) if audit.position else None,
        "reviewer_agreement": alpha,
        "flags": flags,
    }
