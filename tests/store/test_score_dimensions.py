"""A rubric's dimensions (issue 30): several named scores of one answer, optional per line,
stored apart (score_dimensions, names once in dimension_names) only where a line gave some,
through every path a record takes: import on both backends (PostgreSQL's COPY path for new
sessions, its staged insert for older ones), export, copy, delete, undo and prune."""

from __future__ import annotations

import json

from tests.conftest import Cli, both_backends, record, scalar, session, write_jsonl
from tests.store.test_derived_tables import by_hand

RUBRIC = ("accuracy", "relevance", "completeness", "clarity")
ALL_ROWS = "SELECT COUNT(*) FROM score_dimensions"


def rated(key: str, dimensions: tuple[str, ...] = RUBRIC, **changes) -> list[dict]:
    """A 4x4 session whose every record also scores the answer on ``dimensions``: dimension d
    of model m's answer m + d / 4 (model 3's answer leaves the last of several out)."""
    lines = session(key, **changes)
    for line in lines:
        m = int(line["model_id"][-1])
        named = dimensions[:-1] if m == 3 and len(dimensions) > 1 else dimensions
        line["score_dimensions"] = {name: float(m) + d / 4 for d, name in enumerate(named)}
    return lines


def exported(cli: Cli) -> list[str]:
    result = cli("export")
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


@both_backends
def test_named_scores_round_trip_through_import_and_export_and_a_line_without_stays_byte_identical(tmp_path, cli, db):
    plain, new = session("plain"), rated("rated")
    later = [record(session_id="plain", reviewer_id="late/judge", position=p, model_id=f"vendor/model-{p}",
                    score_dimensions={"clarity": 7.5, "accuracy": 2.0}) for p in range(2)]  # added to a stored session
    assert cli("import", str(write_jsonl(tmp_path / "a.jsonl", plain + new))).exit_code == 0
    assert cli("import", str(write_jsonl(tmp_path / "b.jsonl", later))).exit_code == 0
    lines = exported(cli)
    assert sorted(map(json.loads, lines), key=json.dumps) == sorted(plain + new + later, key=json.dumps)
    assert {json.dumps(line, ensure_ascii=False) for line in plain + new} <= set(lines)  # byte for byte
    assert scalar(db, ALL_ROWS) == 12 * 4 + 4 * 3 + 2 * 2
    assert scalar(db, "SELECT COUNT(*) FROM dimension_names") == 4  # each name once


@both_backends
def test_importing_the_same_lines_again_stores_no_named_score_twice(tmp_path, cli, db):
    lines = rated("a") + rated("b", dimensions=("conciseness",))
    assert cli("import", str(write_jsonl(tmp_path / "a.jsonl", lines))).exit_code == 0
    assert cli("import", str(write_jsonl(tmp_path / "again.jsonl", lines))).exit_code == 0
    assert scalar(db, ALL_ROWS) == 60 + 16
    assert scalar(db, "SELECT COUNT(*) FROM dimension_names") == 5


@both_backends
def test_named_scores_go_with_their_record_on_delete_on_undoing_its_import_and_on_prune(tmp_path, cli, db):
    cli("import", str(write_jsonl(tmp_path / "a.jsonl", rated("a", timestamp="2025-01-01T00:00:00Z")
                                  + rated("b", timestamp="2025-03-01T00:00:00Z")
                                  + rated("c", timestamp="2025-03-02T00:00:00Z"))))
    late = [record(session_id="b", reviewer_id="late/judge", model_id="vendor/model-1",
                   timestamp="2025-03-01T00:00:00Z", score_dimensions={"accuracy": 1.0})]
    cli("import", str(write_jsonl(tmp_path / "b.jsonl", late)))
    assert scalar(db, ALL_ROWS) == 3 * 60 + 1
    assert cli("delete", "--import", "2", "--yes").exit_code == 0  # its record in session b, not the session
    assert scalar(db, ALL_ROWS) == 3 * 60
    assert cli("delete", "--session", "b", "--yes").exit_code == 0
    assert scalar(db, ALL_ROWS) == 2 * 60
    assert cli("prune", "--before", "2025-02-01", "--yes").exit_code == 0
    assert scalar(db, ALL_ROWS) == 60
    assert scalar(db, "SELECT COUNT(*) FROM score_dimensions AS d JOIN scores AS sc ON sc.session_id = d.session_id "
                      "AND sc.reviewer_id = d.reviewer_id AND sc.model_id = d.model_id "
                      "AND sc.position = d.position") == 60


@both_backends
def test_copy_carries_the_named_scores(tmp_path, db_url, db):
    local = Cli(tmp_path / "laptop.db")
    local("import", str(write_jsonl(tmp_path / "a.jsonl", rated("a", consent_level=2) + session("b", consent_level=2))))
    result = local("db", "copy", "--to", db_url)
    assert result.exit_code == 0, result.output
    assert sorted(exported(Cli(db_url))) == sorted(exported(local))
    assert scalar(db, ALL_ROWS) == 60


def test_the_dimension_view_shows_one_row_per_record_and_dimension_with_its_name(tmp_path, cli, db):
    cli("import", str(write_jsonl(tmp_path / "a.jsonl", rated("a") + session("b"))))
    assert scalar(db, "SELECT COUNT(*) FROM dimension_records") == 60
    assert scalar(db, "SELECT dimension_score FROM dimension_records WHERE dimension = 'clarity' "
                      "AND model = 'vendor/model-2' AND reviewer = 'vendor/model-0'") == 2.75


@both_backends
def test_db_check_finds_a_named_score_whose_name_is_gone_and_repair_deletes_it(tmp_path, cli, db, db_url):
    cli("import", str(write_jsonl(tmp_path / "a.jsonl", rated("a"))))
    by_hand(db_url, "UPDATE score_dimensions SET dimension_id = 99 WHERE dimension_id = 4")  # clarity: 12 rows
    rows = {row["table"]: row for row in json.loads(cli("db", "check", "--format", "json").stdout)}
    assert rows["score_dimensions.dimension_id"]["extra"] == 12
    assert "dimension_id=99" in rows["score_dimensions.dimension_id"]["examples"]
    assert cli("db", "check", "--repair").exit_code == 0
    assert scalar(db, ALL_ROWS) == 60 - 12


@both_backends
def test_stats_lists_the_dimensions_with_their_counts_and_nothing_without_any(tmp_path, cli):
    cli("import", str(write_jsonl(tmp_path / "plain.jsonl", session("plain"))))
    assert "dimensions" not in json.loads(cli("stats", "--json").stdout)
    cli("import", str(write_jsonl(tmp_path / "a.jsonl", rated("a"))))
    assert json.loads(cli("stats", "--json").stdout)["dimensions"] == {
        "accuracy": 16, "clarity": 12, "completeness": 16, "relevance": 16}


@both_backends
def test_db_check_finds_named_scores_whose_record_is_gone_and_repair_deletes_them(tmp_path, cli, db, db_url):
    cli("import", str(write_jsonl(tmp_path / "a.jsonl", rated("a"))))
    # as sqlite3's shell (foreign keys off) or psql (no per-row check) would let a user
    by_hand(db_url, "INSERT INTO score_dimensions (session_id, reviewer_id, model_id, position, dimension_id, score) "
                    "VALUES (1, 1, 1, 99, 1, 5.0), (1, 1, 1, 99, 2, 6.0)")
    result = cli("db", "check", "--format", "json")
    assert result.exit_code == 1
    rows = {row["table"]: row for row in json.loads(result.stdout)}
    assert rows["score_dimensions.record"]["extra"] == 2
    assert rows["score_dimensions.record"]["examples"] == "session_id=1, reviewer_id=1, model_id=1, position=99"
    assert "score_dimensions.record (62 rows): 2 name no stored scores row" in result.stderr
    assert cli("db", "check", "--repair").exit_code == 0
    assert scalar(db, ALL_ROWS) == 60 and cli("db", "check").exit_code == 0
