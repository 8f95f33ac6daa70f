"""The two sides of a diff read from a database: one window's scores (the report's sample of
a large window, so memory stays bounded at any size), split by reviewer or by council config
version, and paired by ``pairing``. What cannot be paired is a usage error saying why."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.loading.window import SAMPLE_SESSIONS, Window, load_sample, sample_note
from council_db.analysis.versions.pairing import PairedItems, pair_items
from council_db.errors import UsageError
from council_db.resources import read_sql
from council_db.store.database import Database

LOOKUP_CHUNK = 10_000  # session keys per query (SQLite allows 32,766 parameters)


@dataclass(frozen=True)
class Sides:
    items: PairedItems
    first: str  # how each side is named, e.g. "reviewer openai/gpt-4o"
    second: str
    sessions: int  # sessions read (the sample's, when sampled)
    sample: str | None  # what the output says about a sampled window (None: every session)
    first_ts_us: int | None  # the span of the sessions read
    last_ts_us: int | None


def _read(db: Database, window: Window, sample_sessions: int, *, reference: bool) -> tuple[ScoreData, str | None]:
    """The window's scores: the judges' only, or with ``reference`` the human raters' and gold
    labels' too (one may compare a judge with a person)."""
    loaded = load_sample(db, window, sample_sessions)
    return (loaded.with_reference or loaded.data) if reference else loaded.data, sample_note(loaded)


def _span(data: ScoreData) -> tuple[int | None, int | None]:
    known = data.session_ts_us[data.session_ts_us >= 0]
    return (int(known.min()), int(known.max())) if len(known) else (None, None)


def _is(data: ScoreData, name: str) -> np.ndarray:
    """Per record: whether its reviewer is ``name``: that label, or a label of that model."""
    named = np.array([r == name or data.judge_model(r) == name for r in data.reviewers], dtype=bool)
    return named[data.reviewer] if len(named) else np.zeros(0, dtype=bool)


def _nothing_shared(what: str, items: PairedItems) -> None:
    if items.n_items == 0:
        raise UsageError(f"no shared items: {what} ({items.only_first:,} items only the first side scored, "
                         f"{items.only_second:,} only the second); a diff needs the same answers scored by both")


def _sides(data: ScoreData, items: PairedItems, first: str, second: str, sample: str | None) -> Sides:
    return Sides(items, first, second, data.n_sessions, sample, *_span(data))


def reviewers(db: Database, window: Window, first: str, second: str,
              sample_sessions: int = SAMPLE_SESSIONS) -> Sides:
    """Two reviewers on the answers both scored in one session; a cluster is a session."""
    if first == second:
        raise UsageError(f"--reviewer and --against are both {first!r}: name two different reviewers")
    data, sample = _read(db, replace(window, reviewers=[first, second]), sample_sessions,
                         reference=True)
    a, b = _is(data, first), _is(data, second)
    for name, mask, option in ((first, a, "--reviewer"), (second, b, "--against")):
        if not mask.any():
            raise UsageError(f"{option} {name}: no score by this reviewer in the window; "
                             "`council-db reviewers` lists the stored ones")
    items = pair_items(data.session, data.model, data.score, a & ~b, b & ~a, data.models, data.scale)
    _nothing_shared(f"{first} and {second} scored no answer of the same session in the window", items)
    return _sides(data, items, f"reviewer {first}", f"reviewer {second}", sample)


def _envelopes(db: Database, keys: list[str]) -> dict[str, tuple[str | None, str | None]]:
    """Each session's (council_config_version, query_hash), looked up for the sessions read only."""
    found: dict[str, tuple[str | None, str | None]] = {}
    query = read_sql("session_queries")
    with db.reading() as reader:
        for start in range(0, len(keys), LOOKUP_CHUNK):
            for key, version, query_hash in reader.rows(query, {"keys": keys[start:start + LOOKUP_CHUNK]}):
                found[key] = (version, query_hash)
    return found


def config_versions(db: Database, window: Window, first: str, second: str,
                    sample_sessions: int = SAMPLE_SESSIONS) -> Sides:
    """Two council config versions on the same queries' answers by the same candidate (a cluster
    is a query, by its query_hash); each side's score of an answer is the mean over its reviewers."""
    if first == second:
        raise UsageError(f"--config-version and --against-config are both {first!r}: name two versions")
    data, sample = _read(db, replace(window, config_versions=[first, second]), sample_sessions,
                         reference=False)
    envelopes = _envelopes(db, data.session_keys)
    versions = [envelopes.get(key, (None, None)) for key in data.session_keys]
    queries = sorted({q for _, q in versions if q is not None})
    code = {q: i for i, q in enumerate(queries)}
    session_query = np.array([code.get(q, -1) for _, q in versions], dtype=np.int64)
    session_side = np.array([{first: 1, second: 2}.get(v, 0) for v, _ in versions], dtype=np.int64)
    for name, side, option in ((first, 1, "--config-version"), (second, 2, "--against-config")):
        if not (session_side == side).any():
            raise UsageError(f"{option} {name}: no session of this council_config_version in the window")
    query, side = session_query[data.session], session_side[data.session]
    hashed = query >= 0
    items = pair_items(query, data.model, data.score, hashed & (side == 1), hashed & (side == 2), data.models,
                       data.scale)
    _nothing_shared(f"no query (query_hash) was answered by the same candidate under both {first} and {second}",
                    items)
    return _sides(data, items, f"config {first}", f"config {second}", sample)
