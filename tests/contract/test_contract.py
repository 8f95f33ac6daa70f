"""Every bullet of the data contract in PRODUCT.md, checked through a real import."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import text

from council_db.ingest.importer import import_files
from council_db.outlets.export import ExportFilter, records
from council_db.store.database import open_database
from tests.conftest import SESSION, both_backends, record, scalar, session, write_jsonl


def imported(db, tmp_path, lines, name="in.jsonl", **options):
    return import_files(db, [str(write_jsonl(tmp_path / name, lines))], **options)


@pytest.mark.parametrize(
    ("written", "normalised", "display_order"),
    [
        (1, "1.0.0", False),
        ("1.0.0", "1.0.0", False),
        ("1.1.0", "1.1.0", False),
        ("1.2.0", "1.2.0", True),
        ("1.2", "1.2.0", True),
        ("1.1", "1.1.0", False),
        (..., "1.0.0", False),
    ],
)
def test_every_schema_version_form_is_read_and_position_is_display_order_only_from_1_2_0(
    db, tmp_path, written, normalised, display_order
):
    imported(db, tmp_path, [record(schema_version=written)])
    assert scalar(db, "SELECT schema_version FROM sessions") == normalised
    assert scalar(db, "SELECT display_order FROM scores") == display_order


@both_backends
def test_a_newer_major_schema_version_is_rejected_with_a_reason(db, tmp_path):
    summary = imported(db, tmp_path, [record(schema_version="2.0.0")])
    bad = summary.files[0].rejected_lines[0]
    assert bad.field == "schema_version" and "upgrade council-db" in bad.reason


@both_backends
def test_same_line_twice_is_stored_once(db, tmp_path):
    summary = imported(db, tmp_path, [record(), record()])
    assert (summary.total("inserted"), summary.total("duplicates")) == (1, 1)
    again = imported(db, tmp_path, [record()], name="again.jsonl")
    assert (again.total("inserted"), again.total("duplicates")) == (0, 1)
    assert scalar(db, "SELECT COUNT(*) FROM scores") == 1


@both_backends
def test_one_model_under_two_labels_in_a_session_is_two_records(db, tmp_path):
    imported(db, tmp_path, [record(position=0), record(position=3)])
    assert scalar(db, "SELECT COUNT(*) FROM scores") == 2


@both_backends
def test_self_reviews_are_kept_and_marked(db, tmp_path):
    imported(db, tmp_path, [record(model_id="openai/gpt-4o"), record()])
    assert scalar(db, "SELECT COUNT(*) FROM scores") == 2
    assert scalar(db, "SELECT COUNT(*) FROM score_records WHERE self_review") == 1


@pytest.mark.parametrize(
    ("scale", "score", "reason"),
    [
        ("1-10", 0.0, "unscored"),
        ("1-10", 11.0, "out_of_scale"),
        ("1-10", 10.0, None),
        ("1-5", 0.0, "unscored"),
        ("1-5", 4.5, None),
        ("0-100", 0.0, None),
        ("0-100", 101.0, "out_of_scale"),
        ("0-1", 0.5, None),
        ("0-1", -1.0, "out_of_scale"),
    ],
)
@both_backends
def test_out_of_scale_scores_are_kept_and_excluded_with_a_reason(db, tmp_path, scale, score, reason):
    summary = imported(db, tmp_path, [record(score_scale=scale, score_value=score)])
    assert scalar(db, "SELECT excluded_because FROM score_records") == reason
    assert summary.total("excluded") == (reason is not None)


@both_backends
def test_scales_are_stored_with_their_bounds(db, tmp_path):
    imported(db, tmp_path, [record(score_scale="0-100", score_value=70.0)])
    with db.engine.connect() as connection:
        assert connection.execute(text("SELECT name, low, high FROM scales")).all() == [("0-100", 0.0, 100.0)]


@both_backends
def test_an_unknown_scale_is_rejected_with_the_expected_form(db, tmp_path):
    bad = imported(db, tmp_path, [record(score_scale="A-F")]).files[0].rejected_lines[0]
    assert bad.field == "score_scale" and "LOW-HIGH" in bad.reason


@pytest.mark.parametrize(
    ("written", "utc"),
    [
        ("2025-12-17T10:30:00Z", "2025-12-17T10:30:00Z"),
        ("2025-12-17T10:30:00+00:00", "2025-12-17T10:30:00Z"),
        ("2025-12-17T12:30:00+02:00", "2025-12-17T10:30:00Z"),
        ("2025-12-17T05:30:00-05:00", "2025-12-17T10:30:00Z"),
        ("2025-12-17T10:30:00", "2025-12-17T10:30:00Z"),
        ("2025-12-17T10:30:00.250000+00:00", "2025-12-17T10:30:00.250000Z"),
    ],
)
@both_backends
def test_timestamps_in_every_form_are_stored_as_the_same_instant(db, tmp_path, written, utc):
    from council_db.contract.timestamps import format_us

    imported(db, tmp_path, [record(timestamp=written)])
    assert format_us(scalar(db, "SELECT ts_us FROM sessions")) == utc
    assert scalar(db, "SELECT timestamp FROM sessions") == written


@both_backends
def test_instants_are_compared_not_strings(db, tmp_path):
    early = record(session_id="early", timestamp="2025-12-17T12:00:00+02:00")  # 10:00Z
    late = record(session_id="late", timestamp="2025-12-17T11:00:00Z")
    imported(db, tmp_path, [late, early])
    kept = [r["session_id"] for r in records(db, ExportFilter(since="2025-12-17T10:30:00Z"))]
    assert kept == ["late"]


@both_backends
@pytest.mark.parametrize("empty", ["", None, ...])
def test_a_missing_timestamp_is_kept_as_unknown(db, tmp_path, empty):
    summary = imported(db, tmp_path, [record(timestamp=empty)])
    assert summary.total("inserted") == 1
    assert scalar(db, "SELECT ts_us FROM sessions") is None


@both_backends
def test_a_timestamp_that_is_not_iso_8601_is_rejected(db, tmp_path):
    bad = imported(db, tmp_path, [record(timestamp="yesterday")]).files[0].rejected_lines[0]
    assert bad.field == "timestamp" and "ISO-8601" in bad.reason


@both_backends
@pytest.mark.parametrize("key", ["token_bucket", "token_count_bucket"])
def test_both_spellings_of_the_length_bucket_are_read_and_given_back(db, tmp_path, key):
    metadata = {"category": "coding", key: "100-500", "language": "en"}
    imported(db, tmp_path, [record(query_metadata=metadata)])
    assert scalar(db, "SELECT length_bucket FROM sessions") == "100-500"
    assert next(records(db, ExportFilter()))["query_metadata"] == metadata


def test_raw_query_text_is_never_stored(db, db_path, tmp_path):
    secret = "What is my bank password 0xDEADBEEF?"
    lines = [
        record(query=secret),
        record(position=1, query_metadata={"category": "x", "query": secret, "token_bucket": "short"}),
        record(position=2, prompt=secret, score_value="bad"),  # rejected, kept for inspection
        f'{{"session_id": "x", "query": "{secret}", broken',
    ]
    summary = imported(db, tmp_path, lines)
    assert summary.total("inserted") == 2 and summary.total("rejected") == 2
    db.engine.dispose()
    for path in db_path.parent.glob("council.db*"):
        assert secret.encode() not in path.read_bytes(), path


def test_raw_query_text_is_never_stored_on_postgresql(pg_url, tmp_path):
    secret = "What is my bank password 0xDEADBEEF?"
    db = open_database(pg_url, notify=lambda _: None)
    try:
        imported(db, tmp_path, [record(query=secret), record(position=2, prompt=secret, score_value="bad"),
                                f'{{"session_id": "x", "query": "{secret}", broken'])
        with db.engine.connect() as connection:
            tables = connection.execute(text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).scalars()
            tables = list(tables)
        for table in tables:  # every row of every table, as text
            assert scalar(db, f"SELECT COUNT(*) FROM {table} AS t WHERE t::text LIKE '%0xDEADBEEF%'") == 0, table
    finally:
        db.engine.dispose()


@both_backends
def test_query_hash_must_be_16_hex_characters(db, tmp_path):
    summary = imported(db, tmp_path, [record(consent_level=4, query_hash="0123456789abcdef"),
                                      record(position=1, consent_level=4, query_hash="not-a-hash")])
    assert summary.total("inserted") == 1
    assert summary.files[0].rejected_lines[0].field == "query_hash"


@both_backends
def test_consent_level_zero_records_are_skipped_and_counted(db, tmp_path):
    summary = imported(db, tmp_path, [record(consent_level=0), record(position=1)])
    assert (summary.total("skipped"), summary.total("inserted")) == (1, 1)


@both_backends
def test_a_missing_consent_level_means_local_only(db, tmp_path):
    imported(db, tmp_path, [record(consent_level=...)])
    assert scalar(db, "SELECT consent_level FROM sessions") == 1


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"score_value": float("nan")}, "score_value"),
        ({"score_value": "8"}, "score_value"),
        ({"score_value": True}, "score_value"),
        ({"position": -1}, "position"),
        ({"position": 1.5}, "position"),
        ({"response_length_chars": "long"}, "response_length_chars"),
        ({"session_id": ""}, "session_id"),
        ({"reviewer_id": ...}, "reviewer_id"),
        ({"consent_level": 9}, "consent_level"),
        ({"query_metadata": {"category": 3}}, "query_metadata"),
        ({"schema_version": "one"}, "schema_version"),
    ],
)
@both_backends
def test_a_bad_field_rejects_the_line_naming_the_field(db, tmp_path, changes, field):
    line = json.dumps(record(**changes)).replace("NaN", "NaN")
    summary = imported(db, tmp_path, [record(position=9), line])
    bad = summary.files[0].rejected_lines[0]
    assert (bad.line_number, bad.field) == (2, field)
    assert bad.reason.startswith(f"{field}: ")
    assert summary.total("inserted") == 1


@both_backends
def test_every_record_of_a_session_shares_one_session_row(db, tmp_path):
    imported(db, tmp_path, session())
    assert scalar(db, "SELECT COUNT(*) FROM sessions") == 1
    assert scalar(db, "SELECT COUNT(*) FROM scores") == 16
    assert scalar(db, "SELECT COUNT(*) FROM record_envelopes") == 0


@both_backends
def test_a_record_whose_envelope_differs_from_its_sessions_comes_back_unchanged(db, tmp_path):
    lines = [record(), record(position=1, timestamp="2025-12-17T10:31:00Z", council_config_version="0.2.0")]
    imported(db, tmp_path, lines)
    assert scalar(db, "SELECT COUNT(*) FROM record_envelopes") == 1
    assert list(records(db, ExportFilter())) == lines


@both_backends
def test_session_id_filter_exports_one_session(db, tmp_path):
    imported(db, tmp_path, session() + session("other"))
    assert {r["session_id"] for r in records(db, ExportFilter(session=SESSION))} == {SESSION}
