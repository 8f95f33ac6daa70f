"""A line without `position` (or with `"position": null`) is taken as llm-council's own reader
takes it: position 0. It is counted in the import summary, and kept out of position analyses:
0 there would read as "shown first", which nobody knows it was."""

from __future__ import annotations

import csv
import io
import json

from council_db.ingest.lines import LineBatch, parse_batch
from tests.conftest import Cli, both_backends, record, scalar, session, write_jsonl

TAKEN_AS_0 = "records without position (taken as 0, as llm-council does; left out of position analyses)"


def sessions_some_without_position() -> list[dict]:
    """Twelve 4x4 sessions (schema 1.2.0, enough for a report); in three, one reviewer's lines lack position, in
    one, another reviewer's lines have position null."""
    lines = []
    for number in range(12):
        for line in session(f"s{number}", timestamp=f"2025-12-{10 + number}T10:00:00Z"):
            if number < 3 and line["reviewer_id"] == "vendor/model-0":
                del line["position"]
            elif number == 3 and line["reviewer_id"] == "vendor/model-1":
                line["position"] = None
            lines.append(line)
    return lines


def given_position(line: dict) -> bool:
    return line.get("position") is not None


@both_backends
def test_lines_without_position_are_imported_as_0_and_counted(cli, db, tmp_path):
    lines = sessions_some_without_position()
    missing = sum(not given_position(line) for line in lines)
    result = cli("import", str(write_jsonl(tmp_path / "in.jsonl", lines)), "--format", "json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["inserted"], summary["rejected"], summary["no_position"]) == (len(lines), 0, missing)
    assert summary["files"][0]["no_position"] == missing
    assert f"{missing:,} {TAKEN_AS_0}" in result.stderr
    assert scalar(db, "SELECT COUNT(*) FROM scores WHERE NOT display_order") == missing
    assert scalar(db, "SELECT COUNT(*) FROM scores WHERE NOT display_order AND position <> 0") == 0


def test_a_file_whose_lines_all_have_position_says_nothing_of_missing_ones(cli, tmp_path):
    result = cli("import", str(write_jsonl(tmp_path / "in.jsonl", session())), "--format", "json")
    assert json.loads(result.stdout)["no_position"] == 0
    assert "without position" not in result.stderr


def test_position_analyses_leave_out_the_records_without_position(cli, tmp_path):
    lines = sessions_some_without_position()
    cli("import", str(write_jsonl(tmp_path / "in.jsonl", lines)))
    report = json.loads(cli("bias-report", "--format", "json").stdout)
    used = sum(given_position(line) for line in lines)  # every score is on its scale
    assert (report["position"]["records_used"], report["position"]["records_left_out"]) == (used, len(lines) - used)
    slots = {slot["position"]: slot["n_records"] for slot in report["position"]["slot_means"]}
    shown_first = sum(line.get("position") == 0 for line in lines)
    assert slots[0] == shown_first, "a missing position is not counted as shown first"
    assert any("no position" in warning for warning in report["warnings"])


def test_null_and_missing_position_parse_alike_on_both_decode_paths():
    """Through the batch path (msgspec) and, beside a bad line, through pydantic."""
    lines = [json.dumps(record(position=...)).encode(), json.dumps(record(position=None)).encode()]
    for batch in (lines, [*lines, b"not json"]):
        parsed = parse_batch(LineBatch(1, batch, 0))
        assert [found.position for _, found in parsed.records] == [None, None]


def test_a_bad_position_is_still_rejected_naming_the_field(cli, tmp_path):
    result = cli("import", str(write_jsonl(tmp_path / "in.jsonl", [record(position="first")])))
    assert result.exit_code == 3
    assert 'line 1: position: got a string of 5 characters; expected an integer >= 0 (the display slot)' \
           in result.stderr


@both_backends
def test_export_leaves_out_a_position_that_was_not_given_and_the_file_imports_back_the_same(cli, tmp_path):
    lines = sessions_some_without_position() + [record(session_id="old", schema_version="1.1.0", position=...)]
    cli("import", str(write_jsonl(tmp_path / "in.jsonl", lines)))
    exported = [json.loads(line) for line in cli("export").stdout.splitlines()]
    assert sum("position" not in line for line in exported) == sum(not given_position(line) for line in lines) - 1
    (old,) = [line for line in exported if line["session_id"] == "old"]
    assert old["position"] == 0, "before 1.2.0 position is a ranking, not a slot: 0 means the same either way"
    rows = list(csv.DictReader(io.StringIO(cli("export", "--format", "csv").stdout)))
    assert sum(row["position"] == "" for row in rows) == len(exported) - sum("position" in line for line in exported)
    assert all(row["score_scale"] == "1-10" for row in rows), "the columns stay in place"
    again = json.loads(cli("import", str(write_jsonl(tmp_path / "out.jsonl", exported)), "--format", "json").stdout)
    assert (again["inserted"], again["duplicates"]) == (0, len(lines))


def test_a_copy_keeps_a_missing_position_out_of_the_display_slots(tmp_path, db, db_url):
    local = Cli(tmp_path / "laptop.db")
    local("import", str(write_jsonl(tmp_path / "in.jsonl", [record(position=..., consent_level=2)])))
    assert local("db", "copy", "--to", db_url, "--format", "json").exit_code == 0
    assert scalar(db, "SELECT display_order FROM scores") == 0
