"""Export: the stored records as llm-council JSONL (or CSV), streamed in constant memory.

A record imported without position comes back without it (an empty CSV cell) where the
schema makes position a display slot (1.2.0 on): llm-council's reader takes it as 0, as the
import did, and an import or a copy of the export again keeps it out of the display slots,
where a written 0 would have made it "shown first". Before 1.2.0 position is a ranking index,
never a slot, and the stored 0 is written (the line without one cannot be told apart there).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, TextIO

from council_db.contract.fields import DEFAULT_REVIEWER_KIND
from council_db.contract.timestamps import time_text
from council_db.outlets.export_dimensions import DIMENSION_ORDER, Dimensions, any_dimension
from council_db.outlets.export_lines import CsvLines, Frame, JsonLines, envelope_fields, record_dict
from council_db.resources import read_sql
from council_db.store.database import Database
from council_db.store.sql_filters import RECORD_CONSENT, time_range

if TYPE_CHECKING:
    from sqlalchemy import Connection

ORDER = " ORDER BY sc.session_id, sc.reviewer_id, sc.model_id, sc.position"
CHUNK_ROWS = 500  # records fetched and written at a time: larger text blocks cost page faults (sys time)
# A reviewer with provenance: its model's name and its prompt, temperature and seed (revision 0016)
IDENTITIES = ("SELECT r.id, m.name, r.prompt, r.temperature, r.seed FROM models AS r "
              "JOIN models AS m ON m.id = r.model_of")
CACHE_LIMIT = 10_000  # frames and envelopes kept; a session's are used together, so few are needed
# A time window whose sessions' ids span at most this many times their number is read by id
# range (``_id_range``): reading the other sessions' records in the span costs less than the
# sort of the window's records that reading its sessions through the time index needs.
DENSE = 2


@dataclass
class ExportFilter:
    since: str | None = None
    until: str | None = None
    reviewer: str | None = None
    model: str | None = None
    session: str | None = None
    min_consent: int = 0

    def where(self) -> tuple[str, dict[str, Any]]:
        """SQL conditions on records (scores AS sc, sessions AS s, record_envelopes AS e) and
        their parameters; times are compared as instants. Raises LineError for a bad time."""
        clauses, params = self._session_clauses()
        if self.reviewer:  # the reviewer, or a model's every identity (revision 0016)
            clauses.append("sc.reviewer_id IN (SELECT id FROM models WHERE name = :reviewer OR model_of = "
                           "(SELECT id FROM models WHERE name = :reviewer))")
            params["reviewer"] = self.reviewer
        if self.model:
            clauses.append("sc.model_id = (SELECT id FROM models WHERE name = :model)")
            params["model"] = self.model
        if self.min_consent:
            clauses.append(f"{RECORD_CONSENT} >= :min_consent")
            params["min_consent"] = self.min_consent
        return _where(clauses), params

    def session_where(self) -> tuple[str, dict[str, Any]]:
        """The conditions on sessions (AS s) alone: every session of a selected record meets them."""
        clauses, params = self._session_clauses()
        return _where(clauses), params

    def _session_clauses(self) -> tuple[list[str], dict[str, Any]]:
        clauses, params = time_range(self.since, self.until)
        if self.session:
            clauses.append("s.session_key = :session")
            params["session"] = self.session
        return clauses, params


def _where(clauses: list[str]) -> str:
    return (" WHERE " + " AND ".join(clauses)) if clauses else ""


def records(db: Database, filters: ExportFilter) -> Iterator[dict[str, Any]]:
    """Each record as a dict with llm-council's 13 fields, in its order (position left out
    where the line gave none: see the module's docstring). For code that wants dicts (the
    copier); ``write`` makes text lines without them."""
    from sqlalchemy import text

    where, params = filters.where()
    query = text(read_sql("export_records") + where + ORDER)
    with db.engine.connect() as connection:
        result = connection.execution_options(stream_results=True, yield_per=5_000).execute(query, params)
        dimensions = _dimensions(connection, where, params)
        for row in result:
            timestamp = row.timestamp if row.own_ts_us is None else time_text(row.own_ts_us, row.timestamp)
            envelope = (timestamp, row.consent_level, row.schema_version, row.schema_version_raw,
                        row.council_config_version, row.query_hash, row.query_metadata)
            key = (row.key_session, row.key_reviewer, row.key_model, row.position)
            yield record_dict(envelope_fields(row.session_key, envelope, row.score_scale), row.reviewer, row.model,
                              row.position, row.display_order, row.response_length_chars, row.score_value,
                              row.reviewer_kind, (row.response_tokens, row.markdown_headers, row.markdown_lists,
                                                  row.markdown_bold),
                              dimensions.upto(key).get(key) if dimensions else None,
                              (row.reviewer_prompt, row.reviewer_temperature, row.reviewer_seed))


def _dimensions(connection: Connection, where: str, params: dict[str, Any]) -> Dimensions | None:
    """The records' named scores, read beside them; None when the database holds none."""
    if not any_dimension(connection):
        return None
    return Dimensions(iter(_cursor(connection, read_sql("export_dimensions") + where + DIMENSION_ORDER, params,
                                   "export_dimensions")))


def write(db: Database, filters: ExportFilter, out: TextIO, fmt: str = "jsonl") -> int:
    """Write the records as JSONL, a JSON array (the JSONL's objects) or CSV; returns how
    many. Streamed: memory does not grow with the number of records."""
    encoding = CsvLines if fmt == "csv" else JsonLines
    out.write(encoding.header)
    count = 0
    with _streams(db, filters, named=encoding is JsonLines) as (scores, sessions, lookups, dimensions):
        frames = _Frames(sessions, lookups, encoding)
        names = {number: encoding.name(name) for number, name in lookups.models.items()}
        marked = set(lookups.kinds) | (set() if encoding is CsvLines else set(lookups.identities))
        while rows := scores.fetchmany(CHUNK_ROWS):
            if dimensions:
                rows = frames.with_dimensions(rows, dimensions.upto(rows[-1][:4]))
            text = "".join(encoding.lines(rows, frames.cache, frames.build, names, frames.whole, marked))
            if fmt == "json":  # one object a line, each line but the last ending with a comma
                text = ("[\n" if count == 0 else ",\n") + text[:-1].replace("\n", ",\n")
            out.write(text)
            count += len(rows)
    if fmt == "json":
        out.write("\n]\n" if count else "[]\n")
    return count


class _Lookups:
    """Names and scales by id (a few hundred rows at most), and envelopes on demand."""

    def __init__(self, connection: Connection):
        self.connection = connection
        self.models = dict(connection.exec_driver_sql("SELECT id, name FROM models").all())
        self.kinds = dict(connection.exec_driver_sql(  # the reviewers that are no judge (revision 0012)
            "SELECT id, reviewer_kind FROM models WHERE reviewer_kind <> 'judge'").all())
        self.scales = dict(connection.exec_driver_sql("SELECT id, name FROM scales").all())
        self.identities = {number: (model, tuple(provenance)) for number, model, *provenance in  # revision 0016
                           connection.exec_driver_sql(IDENTITIES).all()}
        self._envelopes: dict[int, tuple] = {}

    def envelope(self, number: int) -> tuple:
        """A record_envelopes row (rare: records whose envelope differs from their session's)."""
        from sqlalchemy import text

        if number not in self._envelopes:
            if len(self._envelopes) > CACHE_LIMIT:
                self._envelopes.clear()
            self._envelopes[number] = tuple(self.connection.execute(text(
                "SELECT timestamp, consent_level, schema_version, schema_version_raw, council_config_version, "
                "query_hash, query_metadata FROM record_envelopes WHERE id = :id"), {"id": number}).one())
        return self._envelopes[number]


class _Sessions:
    """The sessions' envelopes, read in id order beside the scores (which are in session order)."""

    def __init__(self, cursor):
        self.cursor = cursor
        self.current: tuple = (None,)

    def get(self, session_id: int) -> tuple:
        """(session_key, envelope) of a session at or after the last one asked for."""
        while self.current[0] != session_id:
            row = self.cursor.fetchone()
            if row is None:
                raise RuntimeError(f"session {session_id} has scores but was not read")  # one snapshot: cannot be
            self.current = row
        return self.current[1], self.current[2:]


class _Frames:
    """Each (session, envelope, scale, own time)'s frame, made once (export_lines' docstring)."""

    def __init__(self, sessions: _Sessions, lookups: _Lookups, encoding):
        self.sessions, self.lookups, self.encoding = sessions, lookups, encoding
        self.cache: dict[tuple, Frame] = {}
        self.dimensions: dict[tuple, dict[str, Any]] = {}  # the current rows' named scores, by record key

    def shared(self, session: int, envelope: int | None, scale: int, own_time: int | None) -> dict[str, Any]:
        key, session_envelope = self.sessions.get(session)
        own = session_envelope if envelope is None else self.lookups.envelope(envelope)
        if own_time is not None:  # the record's own time, in its session's form (revision 0018)
            own = (time_text(own_time, own[0]), *own[1:])
        return envelope_fields(key, own, self.lookups.scales[scale])

    def build(self, key: tuple) -> Frame:
        if len(self.cache) > CACHE_LIMIT:
            self.cache.clear()
        frame = self.cache[key] = self.encoding.frame(self.shared(*key))
        return frame

    def whole(self, row: tuple) -> str:
        """A line that does not fit its frame, encoded from its record's dict."""
        session, reviewer, model, position, display, length, score, scale, envelope, _styled, *style, own_time = row
        names = self.lookups.models
        # CSV has no provenance columns: a reviewer with provenance is its label there, so two
        # prompts of one model stay two reviewers (and two records) when the CSV is read back
        identities = {} if self.encoding is CsvLines else self.lookups.identities
        judge, provenance = identities.get(reviewer, (names[reviewer], ()))
        shared = self.shared(session, envelope, scale, own_time)
        return self.encoding.whole(record_dict(shared, judge, names[model], position, display, length, score,
                                               self.lookups.kinds.get(reviewer, DEFAULT_REVIEWER_KIND), style,
                                               self.dimensions.get(row[:4]), provenance))

    def with_dimensions(self, rows: list[tuple], found: dict[tuple, dict[str, Any]]) -> list[tuple]:
        """The rows, those with named scores (``found``, kept for ``whole``) marked as not
        fitting their frame (the ``styled`` column set)."""
        self.dimensions = found
        if not found:
            return rows
        return [(*row[:9], True, *row[10:]) if row[:4] in found else row for row in rows]


@contextmanager
def _streams(db: Database, filters: ExportFilter,
             named: bool) -> Iterator[tuple[Any, _Sessions, _Lookups, Dimensions | None]]:
    """Driver cursors over the scores and their sessions (and, if ``named``, their named
    scores), in one transaction (one snapshot: an import running meanwhile adds to none). The
    driver's own rows, not SQLAlchemy's: a Row per record cost a quarter of the export's time."""
    with db.engine.connect() as connection, connection.begin():
        lookups = _Lookups(connection)
        (scores_sql, params), (sessions_sql, session_params), record_where = ordered_queries(connection, filters)
        scores = _cursor(connection, scores_sql, params, "export_scores")
        sessions = _cursor(connection, sessions_sql, session_params, "export_sessions")
        try:
            yield scores, _Sessions(sessions), lookups, _dimensions(connection, record_where, params) if named else None
        finally:
            sessions.close()
            scores.close()


def ordered_queries(connection: Connection,
                    filters: ExportFilter) -> tuple[tuple[str, dict[str, Any]], tuple[str, dict[str, Any]], str]:
    """The records' query (sql/export_scores.sql) and their sessions' (sql/export_sessions.sql),
    each with its parameters, in export's order, and the records' conditions; a time window
    of sessions stored about in time order is read by id range (``_id_range``)."""
    record_where, params = filters.where()
    session_where, session_params = filters.session_where()
    ids = _id_range(connection, filters, session_where, session_params)
    if ids:
        record_where += " AND sc.session_id BETWEEN :first_id AND :last_id"
        session_where += " AND s.id BETWEEN :first_id AND :last_id"
        params, session_params = {**params, **ids}, {**session_params, **ids}
    return ((read_sql("export_scores") + record_where + ORDER, params),
            (read_sql("export_sessions") + session_where + " ORDER BY s.id", session_params), record_where)


def _id_range(connection: Connection, filters: ExportFilter, session_where: str,
              session_params: dict[str, Any]) -> dict[str, int] | None:
    """The first and last id of a time window's sessions, where they are at least 1/DENSE of
    the ids between (sessions stored about in time order, the usual store); else None. In
    that id range the records come in the order export writes them (the primary key's), so
    SQLite streams them; through the time index it sorted the window's records, half of
    `export --since`'s time at 1M sessions. Found through that index: a pass over the
    window's entries in it, not over its records."""
    if not (filters.since or filters.until) or filters.session:
        return None
    from sqlalchemy import text

    first, last, count = connection.execute(text(f"SELECT MIN(s.id), MAX(s.id), COUNT(*) FROM sessions AS s"
                                                 f"{session_where}"), session_params).one()
    if not count or last - first + 1 > DENSE * count:
        return None
    return {"first_id": first, "last_id": last}


def _cursor(connection: Connection, sql: str, params: dict[str, Any], name: str):
    """An executed driver cursor; on PostgreSQL a server-side one, so rows stream."""
    from sqlalchemy import text

    compiled = text(sql).compile(dialect=connection.dialect)
    values = compiled.construct_params(params)
    arguments = tuple(values[key] for key in compiled.positiontup) if compiled.positional else values
    driver = connection.connection.driver_connection
    cursor = driver.cursor(name=name) if connection.dialect.name == "postgresql" else driver.cursor()
    cursor.execute(compiled.string, arguments)
    return cursor
