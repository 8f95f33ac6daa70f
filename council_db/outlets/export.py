"""Export: the stored records as llm-council JSONL (or CSV), streamed in constant memory.

A record imported without position comes back without it (an empty CSV cell) where the
schema makes position a display slot (1.2.0 on): llm-council's reader takes it as 0, as the
import did, and an import or a copy of the export again keeps it out of the display slots,
where a written 0 would have made it "shown first". Before 1.2.0 position is a ranking index,
never a slot, and the stored 0 is written (the line without one cannot be told apart there).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from typing import Any, Iterator, TextIO

from council_db.contract.fields import FIELDS
from council_db.contract.schema_versions import export_schema_version, schema_version
from council_db.resources import read_sql
from council_db.store.database import Database
from council_db.store.sql_filters import RECORD_CONSENT, time_range

ORDER = " ORDER BY sc.session_id, sc.reviewer_id, sc.model_id, sc.position"


@dataclass
class ExportFilter:
    since: str | None = None
    until: str | None = None
    reviewer: str | None = None
    model: str | None = None
    session: str | None = None
    min_consent: int = 0

    def where(self) -> tuple[str, dict[str, Any]]:
        """SQL conditions and their parameters; times are compared as instants."""
        clauses, params = time_range(self.since, self.until)
        for column, name in (("reviewer.name", "reviewer"), ("candidate.name", "model"), ("s.session_key", "session")):
            if getattr(self, name):
                clauses.append(f"{column} = :{name}")
                params[name] = getattr(self, name)
        if self.min_consent:
            clauses.append(f"{RECORD_CONSENT} >= :min_consent")
            params["min_consent"] = self.min_consent
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def records(db: Database, filters: ExportFilter) -> Iterator[dict[str, Any]]:
    """Each record as a dict with llm-council's 13 fields, in its order (position left out
    where the line gave none: see the module's docstring)."""
    from sqlalchemy import text

    where, params = filters.where()
    query = text(read_sql("export_records") + where + ORDER)
    with db.engine.connect() as connection:
        result = connection.execution_options(stream_results=True, yield_per=5_000).execute(query, params)
        for row in result:
            record = {
                "schema_version": export_schema_version(row.schema_version, row.schema_version_raw),
                "session_id": row.session_key,
                "timestamp": row.timestamp,
                "consent_level": row.consent_level,
                "reviewer_id": row.reviewer,
                "model_id": row.model,
                "position": row.position,
                "response_length_chars": row.response_length_chars,
                "score_value": float(row.score_value),
                "score_scale": row.score_scale,
                "council_config_version": row.council_config_version,
                "query_hash": row.query_hash,
                "query_metadata": None if row.query_metadata is None else json.loads(row.query_metadata),
            }
            if not row.display_order and schema_version(row.schema_version).display_order:
                del record["position"]  # not given: a slot from 1.2.0 on, so the line had none
            yield record


def write(db: Database, filters: ExportFilter, out: TextIO, fmt: str = "jsonl") -> int:
    """Write the records; returns how many."""
    count = 0
    if fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(FIELDS)
        for record in records(db, filters):
            metadata = record["query_metadata"]
            record["query_metadata"] = None if metadata is None else json.dumps(metadata)
            writer.writerow(["" if record.get(name) is None else record[name] for name in FIELDS])
            count += 1
        return count
    for record in records(db, filters):
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
        count += 1
    return count
