"""Writing normalised records: ids for names and sessions, then one executemany per batch.

Statements go straight to the driver (``exec_driver_sql``) with tuples: this is the hot
path, and the ORM's per-row work would cost more than SQLite's own insert. Every insert
is ``ON CONFLICT DO NOTHING`` on a natural key, which makes importing idempotent and safe
for several importers at once, on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Iterable, NamedTuple, Sequence

from council_db.contract import Envelope, ScoreScale

if TYPE_CHECKING:
    from sqlalchemy import Connection

IN_CHUNK = 500
SESSION_CACHE_LIMIT = 200_000


class Row(NamedTuple):
    """A validated record waiting for ids (a tuple: this is made once per record)."""

    session_key: str
    envelope: Envelope
    reviewer: str
    model: str
    position: int
    length: int
    score: float
    scale: ScoreScale
    exclusion_id: int | None


ENVELOPE_COLUMNS = ("timestamp", "ts_us", "consent_level", "schema_version", "schema_version_raw",
                    "council_config_version", "query_hash", "query_metadata")
SESSION_COLUMNS = ("session_key", *ENVELOPE_COLUMNS, "category", "language", "length_bucket", "import_id")
SCORE_COLUMNS = ("session_id", "reviewer_id", "model_id", "position", "response_length_chars",
                 "score_value", "scale_id", "display_order", "self_review", "exclusion_id", "envelope_id")


def _chunks(items: Sequence, size: int = IN_CHUNK) -> Iterable[Sequence]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


class ScoreWriter:
    """Resolves names and session keys to ids (cached) and inserts score rows."""

    def __init__(self, connection: Connection):
        self.connection = connection
        self.mark = "?" if connection.dialect.paramstyle == "qmark" else "%s"
        self.models: dict[str, int] = {}
        self.scales: dict[str, int] = {}
        self.sessions: dict[str, tuple[int, tuple]] = {}
        self.envelopes: dict[tuple, int] = {}

    def _sql(self, text: str) -> str:
        return text.replace("?", self.mark)

    def _select_ids(self, table: str, key: str, values: Sequence[str], extra: str = "") -> list[tuple]:
        found: list[tuple] = []
        for chunk in _chunks(values):
            marks = ",".join([self.mark] * len(chunk))
            found += self.connection.exec_driver_sql(
                f"SELECT {key}, id{extra} FROM {table} WHERE {key} IN ({marks})", tuple(chunk)
            ).fetchall()
        return found

    def _model_ids(self, names: set[str]) -> None:
        missing = sorted(names - self.models.keys())
        if not missing:
            return
        self.connection.exec_driver_sql(
            self._sql("INSERT INTO models (name) VALUES (?) ON CONFLICT (name) DO NOTHING"),
            [(name,) for name in missing],
        )
        self.models.update(self._select_ids("models", "name", missing))

    def _scale_ids(self, scales: dict[str, ScoreScale]) -> None:
        missing = [scale for name, scale in scales.items() if name not in self.scales]
        if not missing:
            return
        self.connection.exec_driver_sql(
            self._sql("INSERT INTO scales (name, low, high) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING"),
            [(s.name, s.low, s.high) for s in missing],
        )
        self.scales.update(self._select_ids("scales", "name", [s.name for s in missing]))

    def _session_ids(self, rows: list[Row], import_id: int) -> None:
        first_seen: dict[str, Envelope] = {}
        for row in rows:
            if row.session_key not in self.sessions:
                first_seen.setdefault(row.session_key, row.envelope)
        if not first_seen:
            return
        if len(self.sessions) > SESSION_CACHE_LIMIT:
            self.sessions.clear()
        envelope_sql = ", " + ", ".join(ENVELOPE_COLUMNS)
        keys = list(first_seen)
        existing = self._select_ids("sessions", "session_key", keys, envelope_sql)
        self._remember_sessions(existing)
        new = [key for key in keys if key not in self.sessions]
        if not new:
            return
        marks = ", ".join("?" * len(SESSION_COLUMNS))
        self.connection.exec_driver_sql(
            self._sql(f"INSERT INTO sessions ({', '.join(SESSION_COLUMNS)}) VALUES ({marks}) "
                      "ON CONFLICT (session_key) DO NOTHING"),
            [(key, *_envelope_values(first_seen[key]), first_seen[key].category, first_seen[key].language,
              first_seen[key].length_bucket, import_id) for key in new],
        )
        for key, session_id, *envelope in self._select_ids("sessions", "session_key", new, envelope_sql):
            # Usually ours: keep our envelope object so records compare by identity.
            ours = first_seen[key].stored
            stored = _stored(envelope)
            self.sessions[key] = (session_id, ours if stored == ours else stored)

    def _remember_sessions(self, found: list[tuple]) -> None:
        for key, session_id, *envelope in found:
            self.sessions[key] = (session_id, _stored(envelope))

    def _envelope_id(self, envelope: Envelope) -> int:
        """The id of an envelope that differs from its session's (rare: stored once)."""
        known = self.envelopes.get(envelope.stored)
        if known is not None:
            return known
        digest = hashlib.sha1(repr(envelope.stored).encode()).hexdigest()
        marks = ", ".join("?" * (len(ENVELOPE_COLUMNS) + 1))
        self.connection.exec_driver_sql(
            self._sql(f"INSERT INTO record_envelopes (digest, {', '.join(ENVELOPE_COLUMNS)}) VALUES ({marks}) "
                      "ON CONFLICT (digest) DO NOTHING"),
            (digest, *_envelope_values(envelope)),
        )
        (_, envelope_id), = self._select_ids("record_envelopes", "digest", [digest])
        self.envelopes[envelope.stored] = envelope_id
        return envelope_id

    def write(self, rows: list[Row], import_id: int) -> int:
        """Insert the rows; returns how many were new (the rest were already stored)."""
        if not rows:
            return 0
        self._model_ids({row.reviewer for row in rows} | {row.model for row in rows})
        self._scale_ids({row.scale.name: row.scale for row in rows})
        self._session_ids(rows, import_id)
        models, scales, sessions = self.models, self.scales, self.sessions
        values = []
        append = values.append
        for session_key, envelope, reviewer, model, position, length, score, scale, exclusion in rows:
            session_id, session_stored = sessions[session_key]
            stored = envelope.stored
            envelope_id = None if stored is session_stored or stored == session_stored else self._envelope_id(envelope)
            append((session_id, models[reviewer], models[model], position, length, score, scales[scale.name],
                    envelope.display_order, reviewer == model, exclusion, envelope_id))
        marks = ", ".join("?" * len(SCORE_COLUMNS))
        result = self.connection.exec_driver_sql(
            self._sql(f"INSERT INTO scores ({', '.join(SCORE_COLUMNS)}) VALUES ({marks}) "
                      "ON CONFLICT (session_id, reviewer_id, model_id, position) DO NOTHING"),
            values,
        )
        return result.rowcount


def _envelope_values(envelope: Envelope) -> tuple:
    return (envelope.timestamp, envelope.ts_us, envelope.consent_level, envelope.schema_version,
            envelope.schema_version_raw, envelope.council_config_version, envelope.query_hash,
            envelope.query_metadata)


def _stored(columns: Sequence) -> tuple:
    """ENVELOPE_COLUMNS as read back, in the order of ``Envelope.stored`` (ts_us left out)."""
    timestamp, _ts_us, consent, version, version_raw, config, query_hash, metadata = columns
    return (timestamp, consent, version, version_raw, config, query_hash, metadata)
