"""council-db import as a user runs it: files, stdin, gzip, growing files, exit codes."""

from __future__ import annotations

import gzip
import json

import pytest

from tests.conftest import both_backends, record, run_module, session, write_jsonl


@both_backends
def test_a_clean_file_imports_and_exits_0_with_a_json_summary(cli, tmp_path):
    path = write_jsonl(tmp_path / "bias_metrics.jsonl", session())
    result = cli("import", str(path), "--format", "json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert {k: summary[k] for k in ("inserted", "duplicates", "rejected", "skipped")} == {
        "inserted": 16, "duplicates": 0, "rejected": 0, "skipped": 0}
    assert summary["files"][0]["source"] == str(path.resolve())
    assert "16 new records" in result.stderr


@both_backends
def test_bad_lines_are_reported_by_line_number_and_the_good_ones_kept_exit_3(cli, tmp_path):
    lines = session()[:3] + ["{not json", record(position=7, score_value="high")] + session()[3:5]
    result = cli("import", str(write_jsonl(tmp_path / "broken.jsonl", lines)), "--format", "json")
    assert result.exit_code == 3
    assert json.loads(result.stdout)["inserted"] == 5
    assert "line 4: not valid JSON" in result.stderr
    assert "line 5: score_value: got a string of 4 characters; expected a finite number" in result.stderr
    shown = json.loads(cli("rejected", "--format", "json").stdout)
    assert [(r["line_number"], r["field"]) for r in shown] == [(4, None), (5, "score_value")]
    assert (shown[0]["byte_length"], shown[0]["error_column"], shown[0]["known_values"]) == (9, 2, None)


@both_backends
def test_strict_imports_nothing_from_a_file_with_a_bad_line(cli, tmp_path):
    good = write_jsonl(tmp_path / "good.jsonl", session("good"))
    bad = write_jsonl(tmp_path / "bad.jsonl", session("bad") + ["oops"])
    result = cli("import", "--strict", str(good), str(bad), "--format", "json")
    assert result.exit_code == 3
    files = json.loads(result.stdout)["files"]
    assert [(f["inserted"], f["status"]) for f in files] == [(16, "complete"), (0, "strict-failed")]
    assert json.loads(cli("stats", "--format", "json").stdout)["records"] == 16
    assert json.loads(cli("rejected", "--format", "json").stdout)[0]["line_number"] == 17


@both_backends
def test_reimporting_the_same_file_adds_nothing(cli, tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", session())
    cli("import", str(path))
    copy = write_jsonl(tmp_path / "copy.jsonl", session())
    result = cli("import", str(copy), "--format", "json")
    assert (json.loads(result.stdout)["inserted"], json.loads(result.stdout)["duplicates"]) == (0, 16)


@both_backends
def test_a_grown_file_is_read_from_where_the_last_import_stopped(cli, tmp_path):
    path = write_jsonl(tmp_path / "growing.jsonl", session("one"))
    cli("import", str(path))
    with path.open("a") as out:
        out.writelines(json.dumps(line) + "\n" for line in session("two"))
    second = json.loads(cli("import", str(path), "--format", "json").stdout)["files"][0]
    assert (second["mode"], second["lines"], second["inserted"]) == ("incremental", 16, 16)
    third = json.loads(cli("import", str(path), "--format", "json").stdout)["files"][0]
    assert (third["lines"], third["inserted"]) == (0, 0)


@both_backends
def test_bad_lines_in_a_grown_file_are_numbered_from_the_start_of_the_file(cli, tmp_path):
    path = write_jsonl(tmp_path / "growing.jsonl", session("one"))
    cli("import", str(path))
    with path.open("a") as out:
        out.write("garbage\n")
    result = cli("import", str(path))
    assert result.exit_code == 3 and "line 17:" in result.stderr


@both_backends
def test_a_truncated_file_is_read_whole_again_without_doubling(cli, tmp_path):
    path = write_jsonl(tmp_path / "f.jsonl", session("one") + session("two"))
    cli("import", str(path))
    write_jsonl(path, session("one"))
    result = cli("import", str(path), "--format", "json")
    first = json.loads(result.stdout)["files"][0]
    assert (first["mode"], first["inserted"], first["duplicates"]) == ("full", 0, 16)
    assert "truncated" in result.stderr


@both_backends
def test_a_replaced_file_of_the_same_size_is_read_whole_again(cli, tmp_path):
    path = write_jsonl(tmp_path / "f.jsonl", session("aaaa"))
    cli("import", str(path))
    write_jsonl(path, session("bbbb"))
    first = json.loads(cli("import", str(path), "--format", "json").stdout)["files"][0]
    assert (first["mode"], first["inserted"]) == ("full", 16)


@both_backends
def test_a_half_written_last_line_waits_for_the_next_import(cli, tmp_path):
    path = write_jsonl(tmp_path / "live.jsonl", session("one"))
    whole = json.dumps(record(session_id="two"))
    with path.open("a") as out:
        out.write(whole[:40])
    first = json.loads(cli("import", str(path), "--format", "json").stdout)
    assert (first["inserted"], first["rejected"]) == (16, 0)
    with path.open("a") as out:
        out.write(whole[40:] + "\n")
    second = json.loads(cli("import", str(path), "--format", "json").stdout)["files"][0]
    assert (second["mode"], second["inserted"], second["rejected"]) == ("incremental", 1, 0)


@both_backends
def test_a_complete_last_line_without_newline_is_imported(cli, tmp_path):
    path = tmp_path / "no-newline.jsonl"
    path.write_text(json.dumps(record()))
    assert json.loads(cli("import", str(path), "--format", "json").stdout)["inserted"] == 1


@both_backends
def test_a_final_line_that_does_not_parse_yet_is_said_to_be_held_for_the_next_import(cli, tmp_path):
    path = write_jsonl(tmp_path / "live.jsonl", session())
    with path.open("a") as out:
        out.write('{"schema_version": "1.2')
    result = cli("import", str(path), "--format", "json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["files"][0]["held_bytes"] == len('{"schema_version": "1.2')
    assert "the last line (23 bytes) has no newline and does not parse yet: held for the next import" in result.stderr


def test_only_whitespace_after_the_last_newline_is_not_said_to_be_held(cli, tmp_path):
    path = write_jsonl(tmp_path / "live.jsonl", session())
    with path.open("a") as out:
        out.write("  \t")
    result = cli("import", str(path), "--format", "json")
    assert json.loads(result.stdout)["files"][0]["held_bytes"] == 0
    assert "held for the next import" not in result.stderr


@both_backends
def test_line_numbers_stay_right_after_an_import_that_ended_on_a_line_without_its_newline(cli, tmp_path):
    path = tmp_path / "live.jsonl"
    path.write_text(json.dumps(record(position=0)) + "\n" + json.dumps(record(position=1)))
    assert cli("import", str(path)).exit_code == 0
    with path.open("a") as out:  # the writer finishes line 2 with its newline, then goes on
        out.write("\n" + json.dumps(record(position=2)) + "\ngarbage\n")
    result = cli("import", str(path), "--format", "json")
    assert result.exit_code == 3
    assert "line 4: not valid JSON" in result.stderr
    assert json.loads(result.stdout)["files"][0]["lines"] == 2
    with path.open("a") as out:
        out.write("more garbage\n")
    assert "line 5: not valid JSON" in cli("import", str(path)).stderr


def test_text_run_onto_a_line_already_imported_without_its_newline_is_numbered_as_that_line(cli, tmp_path):
    path = tmp_path / "live.jsonl"
    path.write_text(json.dumps(record(position=0)) + "\n" + json.dumps(record(position=1)))
    cli("import", str(path))
    with path.open("a") as out:  # line 2 on disk is now the record followed by "garbage"
        out.write("garbage\n" + json.dumps(record(position=2)) + "\nmore garbage\n")
    result = cli("import", str(path), "--format", "json")
    assert "line 2: not valid JSON" in result.stderr and "line 4: not valid JSON" in result.stderr
    assert json.loads(result.stdout)["inserted"] == 1


@both_backends
def test_a_nul_character_in_a_stored_field_is_rejected_naming_the_field_on_every_backend(cli, tmp_path):
    lines = [record(position=0), record(position=1, session_id="a\u0000b"),
             record(position=2, query_metadata={"category": "x\u0000", "raw_query": "dropped \u0000"}),
             record(position=3, raw_query="never stored \u0000")]
    result = cli("import", str(write_jsonl(tmp_path / "nul.jsonl", lines)), "--format", "json")
    assert result.exit_code == 3 and json.loads(result.stdout)["inserted"] == 2
    shown = json.loads(cli("rejected", "--format", "json").stdout)
    assert [(r["line_number"], r["field"]) for r in shown] == [(2, "session_id"), (3, "query_metadata")]
    assert "NUL character" in shown[0]["reason"]


@both_backends
def test_stdin_is_read_with_a_dash(cli):
    text = "".join(json.dumps(line) + "\n" for line in session())
    result = cli("import", "-", "--format", "json", input=text)
    assert json.loads(result.stdout)["inserted"] == 16


@both_backends
def test_gzip_files_are_read(cli, tmp_path):
    path = tmp_path / "bias_metrics.jsonl.gz"
    with gzip.open(path, "wt") as out:
        out.writelines(json.dumps(line) + "\n" for line in session())
    assert json.loads(cli("import", str(path), "--format", "json").stdout)["inserted"] == 16


@both_backends
def test_a_byte_order_mark_and_crlf_line_ends_are_accepted(cli, tmp_path):
    path = tmp_path / "windows.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b"".join(json.dumps(line).encode() + b"\r\n" for line in session()))
    assert json.loads(cli("import", str(path), "--format", "json").stdout)["inserted"] == 16


@both_backends
def test_invalid_utf8_is_rejected_with_a_fix(cli, tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(json.dumps(record()).encode() + b"\n" + b'{"session_id": "caf\xe9"}\n')
    result = cli("import", str(path))
    assert result.exit_code == 3 and "not UTF-8" in result.stderr and "save the file as UTF-8" in result.stderr


@both_backends
def test_several_files_are_imported_in_one_run(cli, tmp_path):
    paths = [str(write_jsonl(tmp_path / f"{name}.jsonl", session(name))) for name in ("a", "b", "c")]
    summary = json.loads(cli("import", *paths, "--format", "json").stdout)
    assert summary["inserted"] == 48 and len(summary["files"]) == 3


def test_a_missing_file_is_a_fatal_error_naming_it_and_nothing_is_imported(tmp_path):
    good = write_jsonl(tmp_path / "good.jsonl", session())
    result = run_module("--db", str(tmp_path / "x.db"), "import", str(good), str(tmp_path / "nope.jsonl"))
    assert result.returncode == 1
    assert b"nope.jsonl: no such file" in result.stderr and b"Traceback" not in result.stderr
    assert not (tmp_path / "x.db").exists()  # every file is checked before the database is created


def test_a_malformed_option_is_a_usage_error_exit_2(tmp_path):
    result = run_module("--db", str(tmp_path / "x.db"), "import", "--format", "yaml", "f.jsonl")
    assert result.returncode == 2 and b"Traceback" not in result.stderr


@both_backends
def test_quiet_prints_nothing_on_stderr_once_the_database_exists(cli, tmp_path):
    cli("db", "upgrade")
    result = cli("import", "--quiet", str(write_jsonl(tmp_path / "a.jsonl", session())))
    assert result.exit_code == 0 and result.stderr == ""


@both_backends
def test_sessions_spanning_batches_import_whole_when_the_session_cache_overflows(cli, tmp_path, monkeypatch):
    from council_db.ingest import lines
    from council_db.store import writer

    monkeypatch.setattr(lines, "BATCH_LINES", 5)
    monkeypatch.setattr(writer, "SESSION_CACHE_LIMIT", 1)
    path = write_jsonl(tmp_path / "in.jsonl", [line for n in range(6) for line in session(f"s{n}")])
    summary = json.loads(cli("import", str(path), "--format", "json").stdout)
    assert (summary["inserted"], summary["rejected"]) == (96, 0)


def test_a_damaged_gzip_file_is_a_clear_error_not_a_traceback(tmp_path):
    whole = gzip.compress(b"".join(json.dumps(r).encode() + b"\n" for r in session("gz")))
    damaged = tmp_path / "cut.jsonl.gz"
    damaged.write_bytes(whole[: len(whole) // 2])
    result = run_module("--db", str(tmp_path / "council.db"), "import", str(damaged))
    assert result.returncode == 1
    assert b"gzip stream is damaged or cut short" in result.stderr and b"Traceback" not in result.stderr


@pytest.mark.parametrize("first_line", [b"\x1f\x8b", b"\x1f\x8b\x08", b"\x1f\x8b\x08\x00garbage"])
def test_a_file_starting_with_the_gzip_magic_bytes_but_not_gzip_is_read_as_lines(cli, db, tmp_path, first_line):
    path = tmp_path / "odd.jsonl"
    path.write_bytes(first_line + b"\n" + json.dumps(record()).encode() + b"\n")
    result = cli("import", str(path))
    assert result.exit_code == 3, result.output  # 3: some lines were rejected
    assert "1 new record," in result.output and "1 rejected" in result.output
