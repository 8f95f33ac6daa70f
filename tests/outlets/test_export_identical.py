"""export's fast writer gives byte for byte what encoding each record as a dict gave.

The reference below is the export of council-db before issue 16 (a dict per row, the stored
metadata decoded and encoded again), kept verbatim with its SQL but for one change of issue 27
(CSV text a spreadsheet would run as a formula gets a quote), so the two can be compared on
stores that vary everything a line can carry."""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from council_db.contract.fields import FIELDS
from council_db.contract.schema_versions import export_schema_version, schema_version
from council_db.ingest.importer import import_files
from council_db.outlets.export import ORDER, ExportFilter, write
from council_db.spreadsheet_text import spreadsheet_text
from council_db.store.database import Database, open_database
from tests.conftest import both_backends, record, write_jsonl
from tests.outlets.test_export import bias_records

REFERENCE_SQL = """
SELECT
    s.session_key, reviewer.name AS reviewer, candidate.name AS model, sc.position, sc.display_order,
    sc.response_length_chars, sc.score_value, scale.name AS score_scale,
    COALESCE(e.timestamp, s.timestamp) AS timestamp,
    COALESCE(e.consent_level, s.consent_level) AS consent_level,
    COALESCE(e.schema_version, s.schema_version) AS schema_version,
    CASE WHEN e.id IS NULL THEN s.schema_version_raw ELSE e.schema_version_raw END AS schema_version_raw,
    CASE WHEN e.id IS NULL THEN s.council_config_version ELSE e.council_config_version END AS council_config_version,
    CASE WHEN e.id IS NULL THEN s.query_hash ELSE e.query_hash END AS query_hash,
    CASE WHEN e.id IS NULL THEN s.query_metadata ELSE e.query_metadata END AS query_metadata
FROM scores AS sc
JOIN sessions AS s ON s.id = sc.session_id
JOIN models AS reviewer ON reviewer.id = sc.reviewer_id
JOIN models AS candidate ON candidate.id = sc.model_id
JOIN scales AS scale ON scale.id = sc.scale_id
LEFT JOIN record_envelopes AS e ON e.id = sc.envelope_id
"""


def reference_records(db: Database, filters: ExportFilter) -> Iterator[dict[str, Any]]:
    from sqlalchemy import text

    where, params = filters.where()
    with db.engine.connect() as connection:
        for row in connection.execute(text(REFERENCE_SQL + where + ORDER), params):
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
                del record["position"]
            yield record


def reference_write(db: Database, filters: ExportFilter, fmt: str) -> str:
    out = io.StringIO(newline="")
    if fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(FIELDS)
        for record in reference_records(db, filters):
            metadata = record["query_metadata"]
            record["query_metadata"] = None if metadata is None else json.dumps(metadata)
            writer.writerow(["" if record.get(name) is None else spreadsheet_text(record[name])
                             if isinstance(record[name], str) else record[name] for name in FIELDS])
        return out.getvalue()
    for record in reference_records(db, filters):
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return out.getvalue()


def exported(db: Database, filters: ExportFilter, fmt: str) -> str:
    out = io.StringIO(newline="")
    count = write(db, filters, out, fmt)
    assert count == reference_write(db, filters, "jsonl").count("\n")  # JSON escapes a line break in a value
    return out.getvalue()


NAMES = ["openai/gpt-4o", 'quote"d, comma', "line\nbreak", "naïve/模型-é", "  spaced  ", "x"]


def varied_lines() -> list[dict]:
    """Sessions that differ in everything a line can carry: envelopes that change within a
    session, metadata (none, empty, unicode, either bucket key), nulls, excluded scores,
    positions left out before and after 1.2.0, odd floats, several scales."""
    lines = []
    scores = [8.5, 0.1 + 0.2, 7.000000000000001, 1e-07, 0.0, 11.0, 123456789.125, 3.0]
    for number in range(6):
        key = f"session-{number}-ü"
        for reviewer_number, reviewer in enumerate(NAMES[:4]):
            for model_number, model in enumerate(NAMES[2:]):
                at = reviewer_number * 4 + model_number
                changes: dict[str, Any] = {
                    "session_id": key, "reviewer_id": reviewer, "model_id": model, "position": model_number,
                    "response_length_chars": 100 * at + number, "score_value": scores[at % len(scores)],
                    "schema_version": ["1.2.0", "1.1.0", 1, "1.2", "1.0.0", "1.2.0"][number],
                    "query_metadata": [None, {}, {"category": "写作", "language": "日本語", "token_bucket": "long"},
                                       {"category": 'a "b", c', "token_count_bucket": "short"},
                                       {"language": None}, {"category": "coding"}][number],
                    "council_config_version": None if number % 2 else f"0.{number}",
                    "query_hash": None if number % 3 else f"{number:016x}",
                }
                if number == 0 and at % 5 == 1:  # an envelope of the record's own
                    changes.update(timestamp=f"2025-12-17T10:3{at % 10}:00Z", consent_level=1 + at % 4,
                                   query_metadata={"category": f"own-{at}"})
                if number in (1, 5) and at % 3 == 0:
                    changes["position"] = ... if at % 2 else None  # left out, or null
                if number == 4:
                    changes.update(score_scale="1-5", score_value=[0.0, 6.0, 2.5, 5.0][model_number], timestamp="")
                lines.append(record(**changes))
    return lines


@both_backends
@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_export_is_byte_identical_to_a_dict_per_record_on_a_varied_store(db, tmp_path, fmt):
    import_files(db, [str(write_jsonl(tmp_path / "in.jsonl", varied_lines()))])
    for filters in (ExportFilter(), ExportFilter(reviewer=NAMES[1]), ExportFilter(model="line\nbreak"),
                    ExportFilter(session="session-0-ü"), ExportFilter(min_consent=2),
                    ExportFilter(since="2025-12-17T10:30:30Z"), ExportFilter(reviewer="nobody")):
        assert exported(db, filters, fmt) == reference_write(db, filters, fmt), filters


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(bias_records(), min_size=1, max_size=12), st.sampled_from(["jsonl", "csv"]))
def test_export_is_byte_identical_to_a_dict_per_record_for_any_lines(tmp_path_factory, lines, fmt):
    folder = tmp_path_factory.mktemp("identical")
    db = open_database(f"sqlite:///{folder / 'c.db'}", notify=lambda _: None)
    import_files(db, [str(write_jsonl(folder / "in.jsonl", lines))])
    assert exported(db, ExportFilter(), fmt) == reference_write(db, ExportFilter(), fmt)
    db.engine.dispose()
