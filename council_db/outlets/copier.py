"""Copying one database into another (a laptop's into the team server), idempotently.

Records travel as llm-council records: read with the export query, normalised as an import
normalises them, and written by ScoreWriter on natural keys (a session's key; its reviewer,
model and position), so copying twice, or from two laptops whose data overlap, stores each
record once. Ids are never copied: each database numbers its own rows.

What goes: sessions, scores, their envelopes, models and scales. What stays: the source's
``imports`` history and rejected lines (file offsets and raw lines mean nothing on another
machine). The copy itself is recorded on the target as one ``imports`` row (source_kind
"copy"), which the sessions it creates point at.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Iterator, Sequence

from council_db import __version__
from council_db.contract.record import as_record
from council_db.errors import CouncilDbError
from council_db.ingest.importer import COMMIT_EVERY_LINES, now_utc
from council_db.ingest.lines import LineBatch, Parsed
from council_db.ingest.normalise import Normaliser
from council_db.ingest.resume import close_abandoned
from council_db.outlets.export import ExportFilter, records
from council_db.store.database import Database
from council_db.store.import_locks import import_lock
from council_db.store.sql_filters import RECORD_CONSENT
from council_db.store.writer import ScoreWriter

BATCH_RECORDS = 2_000
MAY_LEAVE_THE_MACHINE = 2  # consent levels below this are local only


@dataclass
class CopyResult:
    source: str
    target: str
    import_id: int | None = None
    copied: int = 0  # records read from the source and offered to the target
    inserted: int = 0
    duplicates: int = 0  # already on the target
    left_out: int = 0  # below --min-consent, not copied

    def as_json(self) -> dict:
        return asdict(self)


class _RawLines(Sequence[bytes]):
    """A record's line, made only if it is rejected (none should be: it was valid when imported)."""

    def __init__(self, batch: list[dict]):
        self.batch = batch

    def __len__(self) -> int:
        return len(self.batch)

    def __getitem__(self, index):
        return json.dumps(self.batch[index]).encode()


def _batches(source: Database, min_consent: int) -> Iterator[list[dict]]:
    batch: list[dict] = []
    for record in records(source, ExportFilter(min_consent=min_consent)):
        batch.append(record)
        if len(batch) == BATCH_RECORDS:
            yield batch
            batch = []
    if batch:
        yield batch


def _where(db: Database) -> str:
    return db.engine.url.render_as_string(hide_password=True)


def _below(db: Database, min_consent: int) -> int:
    """How many records the consent filter keeps back."""
    from sqlalchemy import text

    query = text("SELECT COUNT(*) FROM scores AS sc JOIN sessions AS s ON s.id = sc.session_id "
                 "LEFT JOIN record_envelopes AS e ON e.id = sc.envelope_id "
                 f"WHERE {RECORD_CONSENT} < :min_consent")
    with db.engine.connect() as connection:
        return connection.execute(query, {"min_consent": min_consent}).scalar_one()


def copy(source: Database, target: Database, *, min_consent: int = MAY_LEAVE_THE_MACHINE) -> CopyResult:
    """Add the source's records (at or above ``min_consent``) that the target lacks."""
    from sqlalchemy import insert

    from council_db.store.models import Import

    if source.engine.url == target.engine.url:
        raise CouncilDbError(f"--to names the database being copied ({_where(source)}): give another one")
    result = CopyResult(_where(source), _where(target), left_out=_below(source, min_consent))
    imports = Import.__table__
    with target.bulk_writer() as connection:
        close_abandoned(target, connection)
        result.import_id = connection.execute(insert(imports).values(
            source=result.source, source_kind="copy", mode="full", start_offset=0, end_offset=0, start_line=0,
            end_line=0, inserted=0, duplicates=0, rejected=0, skipped=0, status="running", started_at=now_utc(),
            council_db_version=__version__,
        )).inserted_primary_key[0]
        with import_lock(target, result.import_id):  # a killed copy is then found, as a killed import is
            _copy_batches(source, connection, imports, result, min_consent)
    return result


def _copy_batches(source: Database, connection, imports, result: CopyResult, min_consent: int) -> None:
    """Write the source's records in batches, committing with progress now and then."""
    writer = ScoreWriter(connection)
    normaliser = Normaliser()
    since_commit = 0
    for batch in _batches(source, min_consent):
        parsed = Parsed(records=[(number, as_record(record)) for number, record in enumerate(batch, 1)])
        normalised = normaliser.rows(parsed, LineBatch(1, _RawLines(batch), 0))
        if normalised.rejected:
            first = normalised.rejected[0]
            raise CouncilDbError(f"{result.source}: a stored record no longer passes validation "
                                 f"({first.reason}); nothing more was copied. Record: {first.known_values}")
        inserted = writer.write(normalised.rows, result.import_id)
        result.copied += len(batch)
        result.inserted += inserted
        result.duplicates += len(batch) - inserted
        since_commit += len(batch)
        if since_commit >= COMMIT_EVERY_LINES:  # let other writers in now and then
            _checkpoint(connection, imports, result, "running")
            connection.commit()
            since_commit = 0
    _checkpoint(connection, imports, result, "complete")
    connection.commit()


def _checkpoint(connection, imports, result: CopyResult, status: str) -> None:
    from sqlalchemy import update

    values = dict(end_line=result.copied, inserted=result.inserted, duplicates=result.duplicates, status=status)
    if status != "running":
        values["finished_at"] = now_utc()
    connection.execute(update(imports).where(imports.c.id == result.import_id).values(**values))
