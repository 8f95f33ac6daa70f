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

CHUNK = 100_000  # records hashed at a time
RECORD = np.dtype([("session_id", "<i8"), ("reviewer_id", "<i8"), ("model_id", "<i8"), ("position", "<i8"),
                   ("length", "<i8"), ("score", "<f8"), ("unscored", "<i8"), ("scale_id", "<i8"),
                   ("display_order", "<i8"), ("self_review", "<i8"), ("exclusion_id", "<i8"),
                   ("envelope_id", "<i8"), ("import_id", "<i8")])
SESSIONS = ("SELECT s.id, s.session_key, s.ts_us, s.timestamp, s.consent_level, s.schema_version, "
            "s.council_config_version, s.query_hash, s.category FROM report_window AS w "
            "JOIN sessions AS s ON s.id = w.id ORDER BY s.id")
NAMES = ("SELECT id, name, reviewer_kind, model_of FROM models ORDER BY id",
         "SELECT id, name, low, high FROM scales ORDER BY id",
         "SELECT id, digest FROM record_envelopes ORDER BY id")
IMPORTS = ("SELECT id, source, source_kind, format, file_size, head_sha256, tail_sha256, start_offset, end_offset, "
           "start_line, end_line, inserted, duplicates, rejected, skipped, status, started_at, finished_at, "
           "council_db_version FROM imports WHERE id IN ({ids}) ORDER BY id")  # ids: integers read here


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
                models: list[str] = ()) -> tuple[Fingerprint, str | None]:
    """The fingerprint of the records of the sessions ``sessions_sql`` selects (by these reviewers,
    of these models, when named), and the schema revision, in one read transaction."""
    window = f"WITH report_window AS ({sessions_sql}) "
    filters = dict(all_reviewers=not reviewers, reviewers=list(reviewers), all_models=not models, models=list(models))
    digest = hashlib.sha256()
    with db.reading() as reader:
        for sql in NAMES:
            digest.update(repr(reader.rows(sql)).encode())
        sessions = 0
        for rows in reader.chunks(window + SESSIONS, params, CHUNK):
            sessions += len(rows)
            digest.update(repr([tuple(row) for row in rows]).encode())
        records, imports = 0, np.empty(0, dtype=np.int64)
        for rows in reader.chunks(window + read_sql("audit_records"), {**params, **filters}, CHUNK):
            chunk = np.fromiter(map(tuple, rows), dtype=RECORD, count=len(rows))
            digest.update(chunk.tobytes())
            records += len(chunk)
            imports = np.union1d(imports, chunk["import_id"])
        ids = ", ".join(str(int(number)) for number in imports if number >= 0) or "NULL"
        found = [_import(row) for row in reader.rows(IMPORTS.format(ids=ids))]
        return Fingerprint(sessions, records, digest.hexdigest(), found), schema_revision(reader)


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
