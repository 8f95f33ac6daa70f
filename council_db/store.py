"""Writing normalised records: ids for names and sessions, then the score rows.

Statements go straight to the driver (``exec_driver_sql``), several hundred rows per
INSERT: this is the hot path, and per-row work would cost more than SQLite's own insert.
Every insert is ``ON CONFLICT DO NOTHING`` on a natural key, which makes importing
idempotent and safe for several importers at once, on SQLite and PostgreSQL alike.

SQLite gets multi-row ``VALUES`` lists. PostgreSQL gets one array per column, unnested
into rows: the statement text stays short and the same, so psycopg does not re-parse
thousands of placeholders for every batch (measured: that parsing was 60% of the import).
"""

from __future__ import annotations

import hashlib
from functools import cache
from itertools import chain
from typing import TYPE_CHECKING, Iterable, Sequence

from council_db.contract import Envelope, ScoreScale
from council_db.resources import read_sql

if TYPE_CHECKING:
    from sqlalchemy import Connection

IN_CHUNK = 500
ROWS_PER_STATEMENT = 500  # one multi-row INSERT: ~50% faster than a per-row executemany
SESSION_CACHE_LIMIT = 200_000


# A validated record waiting for ids, as a plain tuple (it crosses a process boundary, and a
# plain tuple pickles four times faster than a NamedTuple):
# (session_key, envelope, reviewer, model, position, length, score, scale, exclusion_id)
Row = tuple[str, Envelope, str, str, int, int, float, ScoreScale, "int | None"]


ENVELOPE_COLUMNS = ("timestamp", "ts_us", "consent_level", "schema_version", "schema_version_raw",
                    "council_config_version", "query_hash", "query_metadata")
SESSION_COLUMNS = ("session_key", *ENVELOPE_COLUMNS, "category", "language", "length_bucket", "import_id")
SCORE_COLUMNS = ("session_id", "reviewer_id", "model_id", "position", "response_length_chars",
                 "score_value", "scale_id", "display_order", "self_review", "exclusion_id", "envelope_id")


@cache
def _insert_statement(mark: str, table: str, columns: tuple[str, ...], conflict: str, rows: int) -> str:
    one = "(" + ", ".join([mark] * len(columns)) + ")"
    return (f"INSERT INTO {table} ({', '.join(columns)}) VALUES {', '.join([one] * rows)} "
            f"ON CONFLICT ({conflict}) DO NOTHING")


@cache
def _unnest_statement(table: str, columns: tuple[str, ...], conflict: str) -> str:
    """PostgreSQL: rows from one array parameter per column, typed as the column is."""
    from sqlalchemy.dialects import postgresql

    from council_db.models import Base

    dialect = postgresql.dialect()
    types = [Base.metadata.tables[table].c[name].type.compile(dialect=dialect) for name in columns]
    arrays = ", ".join(f"%b::{kind}[]" for kind in types)  # binary: ~15% faster than text arrays
    return (f"INSERT INTO {table} ({', '.join(columns)}) SELECT * FROM unnest({arrays}) "
            f"ON CONFLICT ({conflict}) DO NOTHING")


def _chunks(items: Sequence, size: int = IN_CHUNK) -> Iterable[Sequence]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


class ScoreWriter:
    """Resolves names and session keys to ids (cached) and inserts score rows."""

    def __init__(self, connection: Connection):
        self.connection = connection
        self.mark = "?" if connection.dialect.paramstyle == "qmark" else "%s"
        self.arrays = connection.dialect.name == "postgresql"
        self.models: dict[str, int] = {}
        self.scales: dict[str, int] = {}
        self.sessions: dict[str, tuple[int, tuple]] = {}
        self.envelopes: dict[tuple, int] = {}
        self.created: set[int] = set()  # sessions this writer inserted whose statistics are not yet written

    def _insert(self, table: str, columns: tuple[str, ...], conflict: str, values: list[tuple]) -> int:
        """Insert rows, skipping those whose key is already stored; returns how many were new."""
        inserted = 0
        for start in range(0, len(values), ROWS_PER_STATEMENT):
            part = values[start:start + ROWS_PER_STATEMENT]
            if self.arrays:
                statement, parameters = _unnest_statement(table, columns, conflict), tuple(map(list, zip(*part)))
            else:
                statement = _insert_statement(self.mark, table, columns, conflict, len(part))
                parameters = tuple(chain.from_iterable(part))
            inserted += self.connection.exec_driver_sql(statement, parameters).rowcount
        return inserted

    def _select_ids(self, table: str, key: str, values: Sequence[str], extra: str = "") -> list[tuple]:
        if self.arrays:
            return self.connection.exec_driver_sql(
                f"SELECT {key}, id{extra} FROM {table} WHERE {key} = ANY(%s)", (list(values),)).fetchall()
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
        self._insert("models", ("name",), "name", [(name,) for name in missing])
        self.models.update(self._select_ids("models", "name", missing))

    def _scale_ids(self, scales: dict[str, ScoreScale]) -> None:
        missing = [scale for name, scale in scales.items() if name not in self.scales]
        if not missing:
            return
        self._insert("scales", ("name", "low", "high"), "name", [(s.name, s.low, s.high) for s in missing])
        self.scales.update(self._select_ids("scales", "name", [s.name for s in missing]))

    def _session_ids(self, rows: list[Row], import_id: int) -> None:
        if len(self.sessions) > SESSION_CACHE_LIMIT:  # before looking: every row must find its id
            self.sessions.clear()
        first_seen: dict[str, Envelope] = {}
        for session_key, envelope, *_ in rows:
            if session_key not in self.sessions:
                first_seen.setdefault(session_key, envelope)
        if not first_seen:
            return
        envelope_sql = ", " + ", ".join(ENVELOPE_COLUMNS)
        keys = list(first_seen)
        existing = self._select_ids("sessions", "session_key", keys, envelope_sql)
        self._remember_sessions(existing)
        new = [key for key in keys if key not in self.sessions]
        if not new:
            return
        inserted = self._insert("sessions", SESSION_COLUMNS, "session_key", [
            (key, *_envelope_values(first_seen[key]), first_seen[key].category, first_seen[key].language,
             first_seen[key].length_bucket, import_id) for key in new
        ])
        found = self._select_ids("sessions", "session_key", new, envelope_sql)
        if inserted == len(new):  # all ours (another importer may have raced us to some)
            self.created.update(session_id for _, session_id, *_ in found)
        for key, session_id, *envelope in found:
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
        self._insert("record_envelopes", ("digest", *ENVELOPE_COLUMNS), "digest",
                     [(digest, *_envelope_values(envelope))])
        (_, envelope_id), = self._select_ids("record_envelopes", "digest", [digest])
        self.envelopes[envelope.stored] = envelope_id
        return envelope_id

    def write(self, rows: list[Row], import_id: int) -> int:
        """Insert the rows; returns how many were new (the rest were already stored)."""
        if not rows:
            return 0
        self._model_ids({row[2] for row in rows} | {row[3] for row in rows})
        self._scale_ids({row[7].name: row[7] for row in rows})
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
        inserted = self._insert("scores", SCORE_COLUMNS, "session_id, reviewer_id, model_id, position", values)
        if inserted:
            self._session_stats(values, all_new=inserted == len(values))
        return inserted

    def _session_stats(self, values: list[tuple], all_new: bool) -> None:
        """Statistics of the sessions this batch touched, in its transaction. Sessions it
        created hold only its rows, so numpy computes theirs from memory; any other session
        (or every one, when some rows were already stored) is recomputed from the database."""
        touched = {value[0] for value in values}
        created = self.created & touched if all_new else set()
        if created:
            from council_db.session_stats import COLUMNS, stats_rows

            rows = stats_rows([value for value in values if value[0] in created])
            self._insert("session_stats", COLUMNS, "session_id, scale_id", rows)
        self.refresh_session_stats(touched - created)
        self.created -= touched

    def refresh_session_stats(self, session_ids: set[int]) -> None:
        """Recompute the touched sessions' statistics from their scores (a session's records
        can arrive in several batches or imports, and an answer's mean score is not additive).
        Ids come in runs (new sessions get consecutive ids), so each run is one range query."""
        for first, last in id_runs(session_ids):  # writers take turns (database.write_lock): no race
            bounds = {"first": first, "last": last}
            self.connection.execute(_sql("DELETE FROM session_stats WHERE session_id BETWEEN :first AND :last"),
                                    bounds)
            self.connection.execute(_sql(read_sql("session_stats")), bounds)


def id_runs(ids: set[int]) -> list[tuple[int, int]]:
    """Sorted ids as (first, last) runs of consecutive integers."""
    runs: list[tuple[int, int]] = []
    for value in sorted(ids):
        if runs and value == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], value)
        else:
            runs.append((value, value))
    return runs


@cache
def _sql(statement: str):
    from sqlalchemy import text

    return text(statement)


def _envelope_values(envelope: Envelope) -> tuple:
    return (envelope.timestamp, envelope.ts_us, envelope.consent_level, envelope.schema_version,
            envelope.schema_version_raw, envelope.council_config_version, envelope.query_hash,
            envelope.query_metadata)


def _stored(columns: Sequence) -> tuple:
    """ENVELOPE_COLUMNS as read back, in the order of ``Envelope.stored`` (ts_us left out)."""
    timestamp, _ts_us, consent, version, version_raw, config, query_hash, metadata = columns
    return (timestamp, consent, version, version_raw, config, query_hash, metadata)
