"""A window's data fingerprint, for an audit bundle (outlets/audit_bundle): how many sessions and
records it holds, a SHA-256 digest of them and of the names they refer to, and the imports that
stored them, read in one snapshot. The records stream through the digest in chunks of numpy
arrays: memory stays bounded at a million sessions. Nothing it returns names a path or holds a
record's text: an import's source is its file's name alone."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import PurePath
from typing import Any

import numpy as np

from council_db.resources import read_sql
from council_db.store.database import Database
from council_db.store.reading import Reader
from council_db.store.sql_filters import record_filters

CHUNK = 100_000  # records hashed at a time
RECORD = np.dtype([("session_id", "<i8"), ("reviewer_id", "<i8"), ("model_id", "<i8"), ("position", "<i8"),
                   ("length", "<i8"), ("score", "<f8"), ("unscored", "<i8"), ("scale_id", "<i8"),
                   ("display_order", "<i8"), ("self_review", "<i8"), ("exclusion_id", "<i8"),
                   ("envelope_id", "<i8"), ("import_id", "<i8")])
SESSIONS = ("SELECT s.id, s.session_key, s.ts_us, s.timestamp, s.consent_level, s.schema_version, "
            "s.council_config_version, s.query_hash, s.category FROM report_window AS w "
            "JOIN sessions AS s ON s.id = w.id ORDER BY s.id")
# The rows the records refer to, by the ids they hold: {ids} is a list of integers read here
NAMES = {("reviewer_id", "model_id"): "SELECT id, name, reviewer_kind, model_of FROM models WHERE id IN ({ids})",
         ("scale_id",): "SELECT id, name, low, high FROM scales WHERE id IN ({ids})",
         ("envelope_id",): "SELECT id, digest FROM record_envelopes WHERE id IN ({ids})",
         ("exclusion_id",): "SELECT id, code FROM exclusion_reasons WHERE id IN ({ids})"}
IMPORTS = ("SELECT id, source, source_kind, format, file_size, head_sha256, tail_sha256, start_offset, end_offset, "
           "start_line, end_line, inserted, duplicates, rejected, skipped, status, started_at, finished_at, "
           "council_db_version FROM imports WHERE id IN ({ids})")
REFERENCES = ("reviewer_id", "model_id", "scale_id", "envelope_id", "exclusion_id", "import_id")


@dataclass(frozen=True)
class Fingerprint:
    sessions: int
    records: int
    sha256: str  # of the records (every stored column), their sessions' envelopes and the names they use
    imports: list[dict[str, Any]]  # the imports that stored them, as the imports table keeps them

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def schema_revision(reader: Reader) -> str | None:
    """The Alembic revision the database is at."""
    rows = reader.rows("SELECT version_num FROM alembic_version")
    return rows[0][0] if rows else None


def fingerprint(db: Database, sessions_sql: str, params: dict[str, Any], *, reviewers: list[str] = (),
                models: list[str] = (), imported_by: datetime | None = None) -> tuple[Fingerprint, str | None]:
    """The fingerprint of the records of the sessions ``sessions_sql`` selects (by these reviewers,
    of these models, when named; stored by imports started by ``imported_by``, when given), and
    the schema revision, in one read transaction. Only the names and imports the records refer
    to count: data imported later leaves it as it was."""
    window = f"WITH report_window AS ({sessions_sql}) "
    filters = record_filters(reviewers, models, imported_by)
    digest = hashlib.sha256()
    with db.reading() as reader:
        sessions = 0
        for rows in reader.chunks(window + SESSIONS, params, CHUNK):
            sessions += len(rows)
            digest.update(repr([tuple(row) for row in rows]).encode())
        records, seen = 0, {name: np.empty(0, dtype=np.int64) for name in REFERENCES}
        for rows in reader.chunks(window + read_sql("audit_records"), {**params, **filters}, CHUNK):
            chunk = np.fromiter(map(tuple, rows), dtype=RECORD, count=len(rows))
            digest.update(chunk.tobytes())
            records += len(chunk)
            seen = {name: np.union1d(ids, chunk[name]) for name, ids in seen.items()}
        for columns, sql in NAMES.items():
            digest.update(repr(_rows(reader, sql, np.concatenate([seen[column] for column in columns]))).encode())
        found = [_import(row) for row in _rows(reader, IMPORTS, seen["import_id"])]
        return Fingerprint(sessions, records, digest.hexdigest(), found), schema_revision(reader)


def _rows(reader: Reader, sql: str, ids: np.ndarray) -> list[tuple]:
    """The rows of these ids (NULL, stored as -1, left out), in id order."""
    listed = ", ".join(str(number) for number in sorted(set(ids.tolist())) if number >= 0) or "NULL"
    return sorted(tuple(row) for row in reader.rows(sql.format(ids=listed)))


def _import(row) -> dict[str, Any]:
    """An imports row as the bundle states it: its file's name, never the path it was read from."""
    (number, source, kind, fmt, size, head, tail, start_offset, end_offset, start_line, end_line, inserted,
     duplicates, rejected, skipped, status, started, finished, version) = row
    return dict(id=number, source=PurePath(source).name if kind != "stdin" else "-", source_kind=kind, format=fmt,
                file_size=size, head_sha256=head, tail_sha256=tail, bytes=[start_offset, end_offset],
                lines=[start_line, end_line], inserted=inserted, duplicates=duplicates, rejected=rejected,
                skipped=skipped, status=status, started_at=_time(started), finished_at=_time(finished),
                council_db_version=version)


def _time(value: datetime | str | None) -> str | None:
    """A stored UTC time as ISO-8601 with a Z (SQLite gives text, PostgreSQL a datetime)."""
    if value is None:
        return None
    text = value.isoformat(sep="T") if isinstance(value, datetime) else str(value).replace(" ", "T")
    return text + "Z"
