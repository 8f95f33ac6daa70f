"""Writing normalised records: ids for names and sessions, then the score rows.

Statements go straight to the driver (``exec_driver_sql``), several hundred rows per INSERT: this
is the hot path, and per-row work would cost more than SQLite's own insert. A row whose natural key
is stored already is skipped (``ON CONFLICT DO NOTHING``, or left out before a COPY of rows known to
be new), which makes importing idempotent and safe for several importers at once, on both backends.

SQLite gets multi-row ``VALUES`` lists. PostgreSQL gets the score, statistics and session rows by
COPY (store.pg_copy): straight into the table for the rows of sessions the batch created, through
a staging table and one INSERT for the rest. Other rows go as one array per column, unnested: the
statement stays short and the same, so psycopg does not re-parse thousands of placeholders every
batch (measured: that parsing was 60% of the import).
"""

from __future__ import annotations

from functools import cache
from operator import attrgetter
from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np

from council_db.contract.envelope import Envelope
from council_db.contract.fields import DEFAULT_REVIEWER_KIND, STYLE_FIELDS
from council_db.contract.reviewer_identity import Identity
from council_db.contract.scales import ScoreScale
from council_db.contract.score_batch import ScoreBatch, ScoreColumns
from council_db.store.batch_keys import first_of_each_key, in_key_order, key_order
from council_db.store.check_memory import mark_sessions
from council_db.store.day_totals import DayTotalsWriter, day_numbers
from council_db.store.dimension_writer import DimensionWriter
from council_db.store.envelope_rows import (
    ENVELOPE_COLUMNS,
    SESSION_COLUMNS,
    envelope_values,
    own_envelopes,
    session_columns,
    stored_envelope,
)
from council_db.store.id_runs import id_runs
from council_db.store.insert_statements import insert_statement, split_shared, unnest_statement
from council_db.store.model_rows import ModelRows
from council_db.store.packed_writes import append as append_packed
from council_db.store.pg_copy import CopyTable, CopyWriter
from council_db.store.provenance import record_reads
from council_db.store.reviewer_kinds import mark_stated
from council_db.store.score_rows import SCORE_COLUMNS, SCORE_KEY, given_score_columns
from council_db.store.session_stats import refresh as refresh_stats

if TYPE_CHECKING:
    from sqlalchemy import Connection

IN_CHUNK = 500
ROWS_PER_STATEMENT = 500  # one multi-row INSERT: ~50% faster than a per-row executemany
# Records per write() that the importer gathers: the writer has a fixed cost per batch
# (statements, round trips, the day totals' numpy sums, a statistics refresh where a batch
# boundary splits a session). On PostgreSQL 16,000 against 4,000 (the readers' batch) took it
# from 5.4-6.0 to 4.7-5.1 us a record, writer and server CPU together; on SQLite the writer's
# CPU fell 4-13%, and the day totals' share of it from 9% to 6% (320,000 records, medians of 7).
BATCH_RECORDS = 16_000
SESSION_CACHE_LIMIT = 200_000
ENVELOPE_CACHE_LIMIT = 200_000

_ENVELOPE_SQL = ", " + ", ".join(ENVELOPE_COLUMNS)
STYLE_COLUMNS = ("session_id", "reviewer_id", "model_id", "position", *STYLE_FIELDS)
STATS_KEY = "session_id, scale_id"
_STORED, _TS_US = attrgetter("stored"), attrgetter("ts_us")
IDENTITY_COLUMNS = ("name", "reviewer_kind", "model_of", "prompt", "temperature", "seed")  # models (revision 0016)


def _chunks(items: Sequence, size: int = IN_CHUNK) -> Iterable[Sequence]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


class ScoreWriter:
    """Resolves names and session keys to ids (cached) and inserts score rows.

    The cached ids last one transaction: within it the write lock keeps every other writer
    out, so an id read or inserted is still there at the commit (which lets the bulk
    writer skip foreign-key checks); after it, another connection may have changed rows."""

    def __init__(self, connection: Connection, *, stats_at_commit: bool = False):
        self.connection = connection
        self.stats_at_commit = stats_at_commit  # refresh older sessions' statistics in settle(), not each batch
        self.stale: set[int] = set()  # sessions whose statistics wait for settle()
        self.mark = "?" if connection.dialect.paramstyle == "qmark" else "%s"
        self.arrays = connection.dialect.name == "postgresql"
        self.batch_records = BATCH_RECORDS
        self.copies = CopyWriter(connection)
        self.totals = DayTotalsWriter(connection)
        self.dimensions = DimensionWriter(connection, self.copies, self._insert_columns, self._select_ids)
        self.names = ModelRows(connection, self._insert, self._select_ids)
        self.models, self.kinds = self.names.ids, self.names.kinds  # name -> its id, its stored reviewer_kind
        self.remarked: list[dict[str, str]] = []  # the stored reviewers' kinds write() changed (reviewer_kinds)
        self.scales: dict[str, int] = {}
        self.sessions: dict[str, tuple[int, tuple, int | None]] = {}  # key: id, stored envelope, ts_us
        self.envelopes: dict[tuple, int] = {}
        self.stored_before = False  # SQLite: sessions met may be stored, uncached: look keys up first
        self.created: set[int] = set()  # sessions this writer inserted whose statistics are not yet written
        self._sequence: str | None = None  # PostgreSQL: the sequence of sessions.id
        self._transaction: object = None  # the one the caches belong to

    def _caches_for_this_transaction(self) -> None:
        transaction = self.connection.get_transaction()
        if transaction is None or transaction is not self._transaction:
            self.stored_before = self.stored_before or bool(self.sessions)  # those may come again, uncached
            for cache in (self.models, self.kinds, self.scales, self.sessions, self.envelopes, self.dimensions.ids):
                cache.clear()

    def _insert(self, table: str, columns: tuple[str, ...], conflict: str, values: list[tuple]) -> int:
        """Insert rows, skipping those whose key is already stored; returns how many were new."""
        return self._insert_columns(table, columns, conflict, [list(column) for column in zip(*values)])

    def _insert_columns(self, table: str, columns: tuple[str, ...], conflict: str | None, data: Sequence,
                        shared: dict[str, object] | None = None) -> int:
        """``_insert`` for rows given column by column (a list a column; on SQLite an array may
        be); ``conflict`` None: rows known to be new, inserted without the conflict check (SQLite
        only). SQLite binds a column with one value in every row once: ``shared``, where the
        caller found them, else those insert_statements.split_shared finds."""
        if not self.arrays and shared is None:
            columns, data, shared = split_shared(columns, data)
        count, width = len(data[0]), len(columns)
        if not self.arrays:  # one flat parameter list, filled a column at a time (C speed)
            flat: list = [None] * (count * width)
            for number, column in enumerate(data):
                flat[number::width] = column
        inserted = 0
        for start in range(0, count, ROWS_PER_STATEMENT):
            end = min(start + ROWS_PER_STATEMENT, count)
            if self.arrays:
                statement = unnest_statement(table, columns, conflict)
                parameters = tuple(column[start:end] for column in data)
            else:
                statement = insert_statement(self.mark, table, columns, conflict, end - start, tuple(shared))
                parameters = (*shared.values(), *flat[start * width:end * width])
            inserted += self.connection.exec_driver_sql(statement, parameters).rowcount
        return inserted

    def _select_ids(self, table: str, key: str, values: Sequence[str], extra: str = "") -> list[tuple]:
        if self.arrays:  # a binary array: as text, psycopg quotes each value in Python (0.7 against 2.3 ms a 1,000)
            return self.connection.exec_driver_sql(
                f"SELECT {key}, id{extra} FROM {table} WHERE {key} = ANY(%b)", (list(values),)).fetchall()
        found: list[tuple] = []
        for chunk in _chunks(values):
            marks = ",".join([self.mark] * len(chunk))
            found += self.connection.exec_driver_sql(
                f"SELECT {key}, id{extra} FROM {table} WHERE {key} IN ({marks})", tuple(chunk)
            ).fetchall()
        return found

    def _model_ids(self, names: set[str], kinds: dict[str, str], identities: dict[str, Identity]) -> None:
        """Ids of the names, inserting new ones: plain names, then identities pointing at their model's."""
        missing = sorted(names - self.models.keys() - identities.keys())
        if missing:
            self.names.add(("name", "reviewer_kind"), [(name, kinds.get(name, DEFAULT_REVIEWER_KIND))
                                                       for name in missing])
        labels = sorted(identities.keys() - self.models.keys())
        if labels:
            self.names.add(IDENTITY_COLUMNS, [
                (label, kinds.get(label, DEFAULT_REVIEWER_KIND), self.models[identities[label].model],
                 identities[label].prompt, identities[label].temperature, identities[label].seed) for label in labels])

    def _scale_ids(self, scales: dict[str, ScoreScale]) -> None:
        missing = [scale for name, scale in scales.items() if name not in self.scales]
        if not missing:
            return
        self._insert("scales", ("name", "low", "high"), "name", [(s.name, s.low, s.high) for s in missing])
        self.scales.update(self._select_ids("scales", "name", [s.name for s in missing]))

    def _session_ids(self, batch: ScoreBatch, import_id: int | None) -> tuple[np.ndarray, list[tuple], list]:
        """Each of the batch's sessions' id, stored envelope and ts_us, inserting the new ones."""
        if len(self.sessions) > SESSION_CACHE_LIMIT:
            self.sessions.clear()
        unknown = [number for number, key in enumerate(batch.session_keys) if key not in self.sessions]
        if unknown and (self.arrays or self.stored_before):  # looked up first: an envelope for a new session only
            self._cache_stored([batch.session_keys[n] for n in unknown])
            unknown = [number for number in unknown if batch.session_keys[number] not in self.sessions]
        if unknown:
            firsts = batch.first_envelopes(unknown)
            self._add_sessions(dict(zip([batch.session_keys[n] for n in unknown], firsts)), import_id)
        ids, stored, ts_us = zip(*map(self.sessions.__getitem__, batch.session_keys))
        return np.array(ids, dtype=np.int64), list(stored), list(ts_us)

    def _add_sessions(self, first_seen: dict[str, Envelope], import_id: int | None) -> None:
        """Insert sessions not yet stored, under ids reserved up front. Writers take turns
        (database.write_lock), so the reserved ids are free, and no other writer stores a
        session between this writer's look-up and its insert.

        SQLite inserts every one and looks up ids only when some were stored already (when
        every one is new, the usual case, no query is needed to learn them). PostgreSQL (and
        SQLite once ``stored_before``) looked them up first; it copies them in (store.pg_copy)."""
        if self.arrays:
            reserved = self._reserve_session_ids(len(first_seen))
            self.copies.copy_rows(_sessions_table(), list(zip(*session_columns(reserved, first_seen, import_id))))
            self._created(reserved, first_seen)
            return
        keys = list(first_seen)
        reserved = self._reserve_session_ids(len(keys))
        inserted = self._insert_columns("sessions", ("id", *SESSION_COLUMNS), "session_key",
                                        session_columns(reserved, first_seen, import_id))
        if inserted == len(keys):
            self._created(reserved, first_seen)
            return
        self.stored_before = True
        self._cache_stored(keys)
        self.created.update(set(reserved).intersection(self.sessions[key][0] for key in keys))

    def _cache_stored(self, keys: list[str]) -> None:
        """The sessions among ``keys`` stored already, into the cache (the rest are new)."""
        for key, session_id, *envelope in self._select_ids("sessions", "session_key", keys, _ENVELOPE_SQL):
            self.sessions[key] = (session_id, stored_envelope(envelope), envelope[1])

    def _created(self, reserved: list[int], first_seen: dict[str, Envelope]) -> None:
        self.created.update(reserved)
        envelopes = first_seen.values()
        self.sessions.update(zip(first_seen, zip(reserved, map(_STORED, envelopes), map(_TS_US, envelopes))))

    def _reserve_session_ids(self, count: int) -> list[int]:
        if self.arrays:  # the ids, as a range when they are one (always, unless another role draws ids too)
            if self._sequence is None:  # looked up once: per id, the look-up cost 5 times the nextval
                self._sequence = self.connection.exec_driver_sql(
                    "SELECT pg_get_serial_sequence('sessions', 'id')").scalar_one()
            first, last, listed = self.connection.exec_driver_sql(
                "WITH ids AS (SELECT nextval(%s::regclass) AS id FROM generate_series(1, %s)) "
                "SELECT MIN(id), MAX(id), CASE WHEN MAX(id) - MIN(id) + 1 > COUNT(*) THEN array_agg(id) END FROM ids",
                (self._sequence, count)).one()
            return list(range(first, last + 1)) if listed is None else sorted(listed)
        return self._next_ids("sessions", count)

    def _next_ids(self, table: str, count: int) -> list[int]:
        """SQLite: the ``count`` ids after the table's largest, free while this writer holds the lock."""
        last = self.connection.exec_driver_sql(f"SELECT COALESCE(MAX(id), 0) FROM {table}").scalar_one()
        return list(range(last + 1, last + 1 + count))

    def _stored_envelope_ids(self, envelopes: list[Envelope]) -> list[int]:
        """The ids of envelopes that differ from their sessions', each stored once, in one
        insert for the batch: rare in llm-council's files, but every grading of a judge log has
        its own time (two statements per envelope were 90% of such an import)."""
        if len(self.envelopes) > ENVELOPE_CACHE_LIMIT:
            self.envelopes.clear()
        missing = {envelope.stored: envelope for envelope in envelopes if envelope.stored not in self.envelopes}
        if missing:
            self._add_envelopes(list(missing.values()))
        return [self.envelopes[envelope.stored] for envelope in envelopes]

    def _add_envelopes(self, missing: list[Envelope]) -> None:
        """Store envelopes by their digest. SQLite inserts them under ids reserved up front (as
        sessions) and looks ids up only when some were stored already: a judge log's envelopes
        are all new, and reading 200,000 ids back by digest took a third of its import."""
        rows = [(envelope.digest, *envelope_values(envelope)) for envelope in missing]
        if not self.arrays:
            reserved = self._next_ids("record_envelopes", len(rows))
            inserted = self._insert("record_envelopes", ("id", "digest", *ENVELOPE_COLUMNS), "digest",
                                    [(envelope_id, *row) for envelope_id, row in zip(reserved, rows)])
            if inserted == len(rows):
                self.envelopes.update(zip([envelope.stored for envelope in missing], reserved))
                return
        else:
            self._insert("record_envelopes", ("digest", *ENVELOPE_COLUMNS), "digest", rows)
        by_digest = {envelope.digest: envelope.stored for envelope in missing}
        for digest, envelope_id in self._select_ids("record_envelopes", "digest", list(by_digest)):
            self.envelopes[by_digest[digest]] = envelope_id

    def _envelope_ids(self, batch: ScoreBatch, stored: list[tuple],
                      ts_us: list) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Per row: its own envelope's id (0: its session's) and its own time (0: its
        session's), each None when no row has one (store.envelope_rows.own_envelopes)."""
        own, row_own, times = own_envelopes(batch, stored, ts_us)
        if row_own is None:
            return None, times
        ids = np.array([0, *self._stored_envelope_ids(own)], dtype=np.int64)
        return ids[row_own + 1], times

    def write(self, batch: ScoreBatch, import_id: int | None) -> int:
        """Insert the batch's records; returns how many were new (the rest were already stored)."""
        if not len(batch):
            return 0
        self._caches_for_this_transaction()
        self._model_ids(set(batch.names), batch.reviewer_kinds, batch.identities)
        self.remarked += mark_stated(self.connection, batch.reviewer_kinds, self.kinds)
        self._scale_ids({scale.name: scale for scale in batch.scales})
        session_ids, stored, ts_us = self._session_ids(batch, import_id)
        model_ids = np.array([self.models[name] for name in batch.names], dtype=np.int64)
        scale_ids = np.array([self.scales[scale.name] for scale in batch.scales], dtype=np.int64)
        # position is a display slot from schema 1.2.0 on, and only where the line gave one
        display_order = np.array([envelope.display_order for envelope in batch.envelopes], dtype=bool)
        columns = ScoreColumns(session_ids[batch.session], model_ids[batch.reviewer], model_ids[batch.model],
                               batch.position, batch.length, batch.score, scale_ids[batch.scale],
                               display_order[batch.envelope] & batch.position_given, batch.self_review(),
                               batch.exclusion)
        touched = set(np.unique(columns.session_id).tolist())
        created = self.created & touched  # this batch's new sessions: none of their rows is stored
        day = day_numbers(ts_us)[batch.session]
        held, before, owners = self.totals.stored(columns, day, id_runs(touched - created))  # before the insert
        record_reads(self.connection, import_id, owners)
        order = key_order(columns)
        new = first_of_each_key(columns, order) & ~held  # the rows an INSERT ... ON CONFLICT DO NOTHING stores
        fresh = new & _in_sessions(columns.session_id, created)
        inserted = self._insert_scores(columns, *self._envelope_ids(batch, stored, ts_us), new, fresh, import_id,
                                       order)
        if batch.style is not None:
            self._insert_styles(columns, batch.style, new & batch.styled())
        if batch.dimensions is not None:
            self.dimensions.write(columns, batch.dimensions, new, fresh)
        if inserted:
            self._session_stats(columns, fresh, touched - created)
            self.totals.add(columns, day, new, before)
            append_packed(self.connection, self._insert_columns, columns, new, fresh)
        self.created -= touched
        if inserted:
            mark_sessions(self.connection, touched)  # db check reads these ranges next (store/check_memory.py)
        self._transaction = self.connection.get_transaction()
        return inserted

    def _insert_scores(self, columns: ScoreColumns, envelope_ids: np.ndarray | None, times: np.ndarray | None,
                       new: np.ndarray, fresh: np.ndarray, import_id: int | None, order: np.ndarray) -> int:
        """The ``new`` score rows, stored by ``import_id`` (the others repeat a key stored or
        earlier in the batch; the insert still skips a stored key). The ``fresh`` ones (of
        sessions this batch created) go in without a conflict check: PostgreSQL copies them
        straight into the table, SQLite inserts them plainly (2.3 against 2.9 us a row); the
        rows of older sessions go through a staging table (store.pg_copy) or ON CONFLICT.
        SQLite takes them in key order (``order``: batch_keys.key_order)."""
        count = len(columns.session_id)
        if self.arrays:
            envelopes = np.zeros(count, dtype=np.int64) if envelope_ids is None else envelope_ids
            own_times = np.zeros(count, dtype=np.int64) if times is None else times
            rows = [*vars(columns).values(), envelopes, np.full(count, import_id or 0, dtype=np.int64), own_times]
            inserted = self.copies.copy(_scores_table(), [column[fresh] for column in rows]) if fresh.any() else 0
            older = new & ~fresh
            if older.any():
                inserted += self.copies.insert(_scores_table(), [column[older] for column in rows])
            return inserted
        inserted = 0
        for rows, conflict in ((fresh, None), (new & ~fresh, SCORE_KEY)):  # a fresh row's key cannot be stored
            if rows.any():
                sorted_rows = in_key_order(rows, order)
                own = (None if column is None else column[sorted_rows] for column in (envelope_ids, times))
                names, values, shared = given_score_columns(columns.select(sorted_rows), *own, import_id)
                inserted += self._insert_columns("scores", names, conflict, values, shared)
        return inserted

    def _insert_styles(self, columns: ScoreColumns, style: np.ndarray, rows: np.ndarray) -> None:
        """The style of the answers of the ``rows`` just stored (models.AnswerStyle), NULL where
        unknown. Rare rows, a few per answer at most: by the plain insert on both backends (COPY's
        NULL marker for an integer, 0, is a count here)."""
        if not rows.any():
            return
        keys = [column[rows].tolist() for column in (columns.session_id, columns.reviewer_id, columns.model_id,
                                                     columns.position)]
        counts = [[None if value != value else int(value) for value in column.tolist()] for column in style[rows].T]
        self._insert_columns("answer_styles", STYLE_COLUMNS, SCORE_KEY, keys + counts)

    def _session_stats(self, columns: ScoreColumns, fresh: np.ndarray, older: set[int]) -> None:
        """Statistics of the sessions this batch touched, in its transaction. A session it
        created holds exactly its ``fresh`` rows, so numpy computes its statistics from
        memory; an older one is recomputed from the database, now or in settle()."""
        if fresh.any():
            self._insert_stats(columns.select(fresh))
        if self.stats_at_commit:
            self.stale |= older
        else:
            refresh_stats(self.connection, older)  # writers take turns (database.write_lock): no race

    def settle(self) -> None:
        """Before a commit (``stats_at_commit``): the older sessions' statistics, recomputed once
        however many batches added to them (fastchat-single's sessions gain records all through a file)."""
        refresh_stats(self.connection, self.stale)
        self.stale.clear()

    def _insert_stats(self, columns: ScoreColumns) -> None:
        """New sessions' statistics: on PostgreSQL copied straight in (none can be stored yet)."""
        from council_db.store.session_stats import COLUMNS, stats_columns

        if self.arrays:
            self.copies.copy(_stats_table(), stats_columns(columns))
        else:  # answer_z's NaN, where unusable, is NULL in SQLite
            self._insert_columns("session_stats", COLUMNS, STATS_KEY, stats_columns(columns))


def _in_sessions(session_id: np.ndarray, sessions: set[int]) -> np.ndarray:
    return np.isin(session_id, np.fromiter(sessions, dtype=np.int64, count=len(sessions)))


@cache
def _scores_table() -> CopyTable:
    return CopyTable.of("scores", SCORE_COLUMNS, SCORE_KEY,
                        nullable=("exclusion_id", "envelope_id", "import_id", "ts_us"))


@cache
def _sessions_table() -> CopyTable:
    return CopyTable.of("sessions", ("id", *SESSION_COLUMNS), "session_key")


@cache
def _stats_table() -> CopyTable:
    from council_db.store.session_stats import COLUMNS

    return CopyTable.of("session_stats", COLUMNS, STATS_KEY, nullable=("answer_z",))
