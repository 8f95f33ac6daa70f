"""The answer's style (issue 29): tokens and markdown counts, optional per line, stored apart
(answer_styles) only where known, through every path a record takes: import on both backends
(PostgreSQL's COPY path for new sessions, its staged insert for older ones), export, copy,
delete and undo, and the window loaders' ``ScoreData.style``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from council_db.analysis.loading.score_data import from_records, judges_only, keep_records, keep_sessions
from council_db.analysis.loading.window import load_sessions
from tests.conftest import Cli, both_backends, record, scalar, session, write_jsonl
from tests.store.test_derived_tables import by_hand

ALL_SESSIONS = "SELECT id FROM sessions"
STYLE_FIELDS = ("response_tokens", "markdown_headers", "markdown_lists", "markdown_bold")


def styled(key: str, **changes) -> list[dict]:
    """A 4x4 session whose answers have a style: model m's answer m*100 tokens, m headers,
    2m list items, and bold spans unknown for model 0 (a partial style)."""
    lines = session(key, **changes)
    for line in lines:
        m = int(line["model_id"][-1])
        line.update(response_tokens=m * 100, markdown_headers=m, markdown_lists=2 * m)
        if m:
            line["markdown_bold"] = m + 1
    return lines


def exported(cli: Cli) -> list[str]:
    result = cli("export")
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


@both_backends
def test_style_fields_round_trip_through_import_and_export_and_a_line_without_stays_byte_identical(tmp_path, cli,
                                                                                                 db):
    plain, new = session("plain"), styled("styled")
    later = [record(session_id="plain", reviewer_id="late/judge", position=p, model_id=f"vendor/model-{p}",
                    response_tokens=7, markdown_bold=0) for p in range(2)]  # records added to a stored session
    assert cli("import", str(write_jsonl(tmp_path / "a.jsonl", plain + new))).exit_code == 0
    assert cli("import", str(write_jsonl(tmp_path / "b.jsonl", later))).exit_code == 0
    lines = exported(cli)
    assert sorted(map(json.loads, lines), key=json.dumps) == sorted(plain + new + later, key=json.dumps)
    assert {json.dumps(line, ensure_ascii=False) for line in plain} <= set(lines)  # byte for byte
    assert scalar(db, "SELECT COUNT(*) FROM answer_styles") == len(new) + len(later)
    assert scalar(db, "SELECT COUNT(*) FROM answer_styles WHERE markdown_bold IS NULL") == 4  # model 0's


@pytest.mark.parametrize("value, shown", [(-1, "-1"), ("12", "a string of 2 characters"), (1.5, "1.5"),
                                          (True, "true"), ({"n": 1}, "an object")])
@pytest.mark.parametrize("field", STYLE_FIELDS)
def test_a_bad_style_value_rejects_its_line_naming_the_field_and_keeps_the_good_ones(tmp_path, cli, db, field,
                                                                                      value, shown):
    lines = [*session("good"), record(session_id="bad", **{field: value})]
    result = cli("import", str(write_jsonl(tmp_path / "s.jsonl", lines)))
    assert result.exit_code == 3, result.output  # some lines rejected
    assert f"line 17: {field}: got {shown}" in result.stderr and "Traceback" not in result.stderr
    assert scalar(db, "SELECT COUNT(*) FROM scores") == 16
    assert scalar(db, "SELECT field FROM rejected_lines") == field


@both_backends
def test_a_style_goes_with_its_record_on_delete_and_on_undoing_its_import(tmp_path, cli, db):
    cli("import", str(write_jsonl(tmp_path / "a.jsonl", styled("a") + styled("b"))))
    late = [record(session_id="b", reviewer_id="late/judge", model_id="vendor/model-1", response_tokens=3)]
    cli("import", str(write_jsonl(tmp_path / "b.jsonl", late)))
    assert scalar(db, "SELECT COUNT(*) FROM answer_styles") == 33
    assert cli("delete", "--import", "2", "--yes").exit_code == 0  # its record in session b, not the session
    assert scalar(db, "SELECT COUNT(*) FROM answer_styles") == 32
    assert cli("delete", "--session", "a", "--yes").exit_code == 0
    assert scalar(db, "SELECT COUNT(*) FROM answer_styles") == 16
    assert scalar(db, "SELECT COUNT(*) FROM answer_styles AS st JOIN scores AS sc ON sc.session_id = st.session_id "
                      "AND sc.reviewer_id = st.reviewer_id AND sc.model_id = st.model_id "
                      "AND sc.position = st.position") == 16


@both_backends
def test_copy_carries_the_styles(tmp_path, db_url, db):
    local = Cli(tmp_path / "laptop.db")
    local("import", str(write_jsonl(tmp_path / "a.jsonl", styled("a", consent_level=2) + session("b", consent_level=2))))
    result = local("db", "copy", "--to", db_url)
    assert result.exit_code == 0, result.output
    assert sorted(exported(Cli(db_url))) == sorted(exported(local))
    assert scalar(db, "SELECT COUNT(*) FROM answer_styles") == 16


@both_backends
def test_the_window_loads_each_records_style_in_its_order_and_none_without_any(tmp_path, cli, db):
    cli("import", str(write_jsonl(tmp_path / "plain.jsonl", session("plain", timestamp="2025-01-01T00:00:00Z"))))
    assert load_sessions(db, ALL_SESSIONS, {}).style is None  # no style stored: no array
    cli("import", str(write_jsonl(tmp_path / "s.jsonl", styled("styled", timestamp="2025-01-02T00:00:00Z"))))
    data = load_sessions(db, ALL_SESSIONS, {})
    assert data.style.shape == (32, 4) and data.style.dtype == np.float64
    model = np.array([int(name[-1]) for name in data.models])[data.model]
    mine = data.session == 1
    assert np.isnan(data.style[~mine]).all()
    expected = np.c_[model * 100, model, 2 * model, np.where(model > 0, model + 1, np.nan)][mine]
    np.testing.assert_array_equal(data.style[mine], expected)
    assert load_sessions(db, "SELECT id FROM sessions WHERE session_key = 'plain'", {}).style is None


def test_from_records_and_the_record_filters_carry_the_style():
    lines = styled("s1", timestamp="2025-01-01T00:00:00Z") + session("s2", timestamp="2025-01-02T00:00:00Z")
    data = from_records(lines)
    assert data.style.shape == (32, 4) and np.isnan(data.style[16:]).all()
    assert keep_sessions(data, np.array([False, True])).style is None  # the unstyled session alone
    first = keep_records(data, data.session == 0)
    assert first.style.shape == (16, 4) and not np.isnan(first.style[:, 0]).any()
    data.kinds = {"vendor/model-0": "human"}
    assert judges_only(data).style.shape == (24, 4)
    assert from_records(session("plain")).style is None


def test_styles_are_matched_to_records_by_the_whole_key_whatever_their_order():
    from council_db.analysis.loading.window_records import STYLE, STYLED_RECORD, aligned_styles

    rows = np.zeros(4, dtype=STYLED_RECORD)
    rows["session_id"], rows["reviewer_id"], rows["model_id"], rows["position"] = [1, 1, 1, 2], 5, 7, [0, 3, 9, 3]
    styles = np.array([(2, 5, 7, 3, 40, 1, np.nan, 0), (1, 5, 7, 9, 10, 2, 3, 4), (1, 5, 8, 3, 99, 9, 9, 9)],
                      dtype=STYLE)  # the last is another model's: no row of these
    found = aligned_styles(rows, styles)
    np.testing.assert_array_equal(found, [[np.nan] * 4, [np.nan] * 4, [10, 2, 3, 4], [40, 1, np.nan, 0]])
    assert aligned_styles(rows, styles[2:]) is None and aligned_styles(rows, styles[:0]) is None


@both_backends
def test_score_records_shows_each_records_style_and_null_where_unknown(tmp_path, cli, db):
    cli("import", str(write_jsonl(tmp_path / "a.jsonl", styled("s") + session("plain"))))
    with db.reading() as reader:
        rows = reader.rows("SELECT session_id, model, response_tokens, markdown_headers, markdown_lists, markdown_bold "
                           "FROM score_records")
    for key, model, *style in rows:
        m = int(model[-1])
        assert style == ([None] * 4 if key == "plain" else [m * 100, m, 2 * m, m + 1 if m else None])
    assert len(rows) == 32


def test_an_import_gives_postgresqls_planner_the_styles_it_stored(tmp_path, pg_url):
    """The import ANALYZEs the tables it wrote (store/upkeep.py): one never analyzed is planned
    from a guess (an export once took 233 s instead of 6.5 s that way)."""
    cli = Cli(pg_url)
    assert cli("import", str(write_jsonl(tmp_path / "s.jsonl", styled("s")))).exit_code == 0
    from council_db.store.database import open_database

    db = open_database(pg_url, notify=lambda _: None)
    try:
        assert scalar(db, "SELECT reltuples FROM pg_class WHERE relname = 'answer_styles'") == 16
    finally:
        db.engine.dispose()


def test_a_window_of_a_store_without_styles_reads_no_more_columns_than_before(tmp_path, cli, db):
    from council_db.analysis.loading.window_records import RECORD, STYLED_RECORD, fetch_records

    cli("import", str(write_jsonl(tmp_path / "plain.jsonl", session("plain"))))
    assert fetch_records(db, ALL_SESSIONS, {}).rows.dtype == RECORD and fetch_records(db, ALL_SESSIONS, {}).style is None
    cli("import", str(write_jsonl(tmp_path / "styled.jsonl", styled("styled"))))
    assert fetch_records(db, ALL_SESSIONS, {}).rows.dtype == STYLED_RECORD


@both_backends
def test_db_check_finds_a_style_whose_record_is_gone_and_repair_deletes_it(tmp_path, cli, db, db_url):
    cli("import", str(write_jsonl(tmp_path / "a.jsonl", styled("a"))))
    # as sqlite3's shell (foreign keys off) or psql (no per-row check) would let a user
    by_hand(db_url, "INSERT INTO answer_styles (session_id, reviewer_id, model_id, position, response_tokens) "
                    "VALUES (1, 1, 1, 99, 5)")
    result = cli("db", "check", "--format", "json")
    assert result.exit_code == 1
    rows = {row["table"]: row for row in json.loads(result.stdout)}
    assert (rows["answer_styles.record"]["rows"], rows["answer_styles.record"]["extra"]) == (17, 1)
    assert rows["answer_styles.record"]["examples"] == "session_id=1, reviewer_id=1, model_id=1, position=99"
    assert cli("db", "check", "--repair").exit_code == 0
    assert scalar(db, "SELECT COUNT(*) FROM answer_styles") == 16 and cli("db", "check").exit_code == 0
