"""What goes wrong around council-db (files, directories, disks, URLs, keys) is one line on
stderr naming the file or URL and the fix, with exit code 1; a bug in council-db itself
still shows its traceback. Every case runs the real entry point in a real process."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests import unprivileged
from tests.conftest import record, run_module, session, write_jsonl

needs_permissions = pytest.mark.skipif(unprivileged.why_unavailable() is not None,
                                       reason=str(unprivileged.why_unavailable()))


def one_line_error(result: subprocess.CompletedProcess) -> str:
    """The message, after checking it is the whole of stderr, on one line, with exit code 1."""
    text = result.stderr.decode(errors="replace")
    assert result.returncode == 1, text
    assert "Traceback" not in text and text.startswith("error: ") and text.count("\n") == 1, text
    return text


def empty_database(tmp_path: Path) -> Path:
    """A database made beforehand, so that the command's stderr is its error alone."""
    db_path = tmp_path / "council.db"
    assert run_module("--db", str(db_path), "db", "upgrade").returncode == 0
    return db_path


def filled_database(tmp_path: Path) -> Path:
    db_path = tmp_path / "council.db"
    done = run_module("--db", str(db_path), "import", str(write_jsonl(tmp_path / "in.jsonl", session())))
    assert done.returncode == 0, done.stderr.decode()
    return db_path


@needs_permissions
def test_an_unreadable_input_file_is_named_with_the_fix(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", [record()])
    data.chmod(0)

    text = one_line_error(unprivileged.run("--db", str(empty_database(tmp_path)), "import", str(data)))

    assert str(data) in text and "permission denied" in text and "chmod u+r" in text


@needs_permissions
def test_a_new_database_in_a_read_only_directory_is_named_with_the_fix(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", [record()])
    folder = tmp_path / "read-only"
    folder.mkdir(mode=0o555)

    text = one_line_error(unprivileged.run("--db", str(folder / "council.db"), "import", str(data)))

    assert f"cannot create a database at {folder / 'council.db'}" in text and "--db" in text


def test_a_file_name_that_is_not_utf8_is_imported_under_an_escaped_name(tmp_path):
    name = os.fsdecode(b"caf\xe9.jsonl")
    data = write_jsonl(tmp_path / name, [record()])
    db_path = tmp_path / "council.db"

    first = run_module("--db", str(db_path), "import", str(data))
    again = run_module("--db", str(db_path), "import", str(data))

    assert first.returncode == 0, first.stderr.decode()
    assert "caf\\xe9.jsonl (import 1): 1 line, 1 new record," in first.stderr.decode()
    assert again.returncode == 0 and "0 new records" in again.stderr.decode()


def test_backing_up_a_corrupt_database_names_it(tmp_path):
    corrupt = tmp_path / "council.db"
    corrupt.write_bytes(b"this is not an SQLite database\n" * 200)
    target = tmp_path / "saved.db"

    text = one_line_error(run_module("--db", str(corrupt), "db", "backup", str(target)))

    assert str(corrupt) in text and "not a readable SQLite database" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["council.db"]


def _small_file_size_limit() -> None:
    """A full disk, portably: writes past 40 kB fail with EFBIG (SIGXFSZ ignored, as a
    full disk sends no signal)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (40_000, 40_000))


def test_a_backup_onto_a_full_disk_names_the_target_and_leaves_nothing(tmp_path):
    db_path = filled_database(tmp_path)
    backups = tmp_path / "backups"
    backups.mkdir()
    target = backups / "saved.db"

    result = subprocess.run([sys.executable, "-m", "council_db", "--db", str(db_path), "db", "backup", str(target)],
                            capture_output=True, timeout=120, preexec_fn=_small_file_size_limit)

    text = one_line_error(result)
    assert f"could not write the backup {target}" in text and "free some space" in text
    assert list(backups.iterdir()) == []


def test_a_query_hash_key_file_that_is_not_utf8_is_named(tmp_path):
    key = tmp_path / "hmac.key"
    key.write_bytes(b"\xff\xfe" + b"k" * 40 + b"\n")
    key.chmod(0o600)
    council = {"session_id": "s-1", "consent_level": 4, "query": "how do I sort a list?",
               "stage1_results": [{"model": "a/x", "response": "r"}, {"model": "b/y", "response": "s"}],
               "stage2_results": [{"model": "a/x", "parsed_ranking": {"scores": {"Response A": 7, "Response B": 8}}}],
               "label_to_model": {"Response A": "a/x", "Response B": "b/y"}}
    (tmp_path / "session.json").write_text(json.dumps(council))
    env = {**os.environ, "COUNCIL_DB_HMAC_SECRET_FILE": str(key)}
    env.pop("COUNCIL_DB_HMAC_SECRET", None)

    result = subprocess.run([sys.executable, "-m", "council_db", "--db", str(empty_database(tmp_path)), "ingest",
                             str(tmp_path / "session.json")], capture_output=True, timeout=120, env=env)

    text = one_line_error(result)
    assert str(key) in text and "not UTF-8 text" in text


@pytest.mark.parametrize("url", ["mysql://user@127.0.0.1/council", "oracle://127.0.0.1/council",
                                 "postgresql://user@127.0.0.1:port/council"])
def test_a_database_url_council_db_cannot_use_is_named_with_what_it_can(url):
    text = one_line_error(run_module("--db", url, "stats"))

    assert url.split("@")[-1].split("/")[0].split(":")[0] in text and "SQLite" in text and "PostgreSQL" in text


@pytest.mark.parametrize("bug", ["TypeError('unsupported operand')", "AssertionError('invariant broken')"])
def test_a_bug_in_council_db_still_shows_its_traceback(bug):
    script = ("import sys; from council_db.cli.app import app, main\n"
              "@app.command('boom')\n"
              f"def boom():\n    raise {bug}\n"
              "sys.argv = ['council-db', 'boom']; main()")

    result = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)

    assert result.returncode == 1
    assert "Traceback" in result.stderr.decode() and bug.split("(")[0] in result.stderr.decode()


def test_a_copy_target_that_cannot_be_reached_is_named_not_the_source(tmp_path):
    source = empty_database(tmp_path)

    text = one_line_error(run_module("--db", str(source), "db", "copy", "--to", "postgresql://me:pw@127.0.0.1:1/team"))

    assert "(postgresql://me:***@127.0.0.1:1/team)" in text and str(source) not in text and "pw" not in text


@pytest.mark.parametrize("command", [["bias-report"], ["stats"], ["sessions"], ["rejected"], ["trends"],
                                     ["anomalies"], ["leaderboard"], ["export"], ["audit", "x"],
                                     ["scores", "--session", "x"], ["db", "check"], ["db", "current"],
                                     ["sql", "SELECT 1"]])
def test_a_read_command_on_a_mistyped_db_says_it_does_not_exist_and_makes_no_file(tmp_path, command):
    mistyped = tmp_path / "councl.db"

    text = one_line_error(run_module("--db", str(mistyped), *command))

    assert str(mistyped) in text and "council-db" in text and "import" in text
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", [
    ["bias-report", "--days", "nan"], ["trends", "--days", "nan"], ["leaderboard", "--days", "nan"],
    ["bias-report", "--seed", "-1"], ["leaderboard", "--seed", "-1"], ["simulate", "-o", "-", "--seed", "-1"],
    ["sql", "--timeout", "nan", "SELECT 1"],
])
def test_a_value_no_option_can_use_is_a_usage_error_not_a_traceback(tmp_path, args):
    result = run_module("--db", str(filled_database(tmp_path)), *args)

    text = result.stderr.decode()
    assert result.returncode == 2 and "Traceback" not in text and "Invalid value" in text, text


@pytest.mark.parametrize("args", [["bias-report", "--sessions", "99999999999999999999999"],
                                  ["sessions", "-n", "99999999999999999999999"],
                                  ["rejected", "--import", "99999999999999999999999"]])
def test_a_count_larger_than_any_database_means_all(tmp_path, args):
    result = run_module("--db", str(filled_database(tmp_path)), *args)

    assert result.returncode == 0, result.stderr.decode()


@pytest.mark.parametrize("command", [["db", "readonly-role"], ["stats"], ["sql", "SELECT 1"]])
def test_an_unsupported_url_is_one_line_without_its_password(command):
    text = one_line_error(run_module("--db", "mysql://me:secret@127.0.0.1/council", *command))

    assert "mysql is not supported" in text and "secret" not in text


def test_an_unsupported_read_only_url_is_one_line_without_its_password(tmp_path):
    text = one_line_error(run_module("--db", str(filled_database(tmp_path)), "sql", "--db-readonly",
                                     "mysql://me:secret@127.0.0.1/council", "SELECT 1"))

    assert "mysql is not supported" in text and "secret" not in text


def test_a_validation_error_that_reaches_the_top_is_one_line_without_pydantics_prefix():
    script = ("import sys\n"
              "from pydantic import BaseModel, field_validator\n"
              "from council_db.cli.app import app, main\n"
              "class Settings(BaseModel):\n"
              "    sessions: int\n"
              "    @field_validator('sessions')\n"
              "    @classmethod\n"
              "    def positive(cls, value):\n"
              "        if value < 1:\n"
              "            raise ValueError('sessions must be at least 1')\n"
              "        return value\n"
              "@app.command('boom')\n"
              "def boom():\n    Settings(sessions=0)\n"
              "sys.argv = ['council-db', 'boom']; main()")

    text = one_line_error(subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120))

    assert text == "error: sessions: sessions must be at least 1\n"


def test_sql_on_a_missing_database_names_it_as_typed(tmp_path):
    done = run_module("--db", "typo.db", "sql", "SELECT 1", cwd=tmp_path)
    text = one_line_error(done)
    assert text.startswith(f"error: no database at typo.db ({tmp_path / 'typo.db'})")
    assert not (tmp_path / "typo.db").exists()


@pytest.mark.parametrize("command", [("bias-report",), ("export",), ("push", "--dry-run")])
def test_a_since_after_until_names_both_without_a_format_example(tmp_path, command):
    """Both times were read; the example of a time's format would only mislead."""
    path = write_jsonl(tmp_path / "in.jsonl", session("a"))
    assert run_module("--db", str(tmp_path / "c.db"), "import", "-q", str(path)).returncode == 0
    done = run_module("--db", str(tmp_path / "c.db"), *command, "--since", "2026-01-02", "--until", "2026-01-01")
    text = done.stderr.decode()
    assert done.returncode == 2 and "--since 2026-01-02 is not before --until 2026-01-01" in text, text
    assert "give e.g." not in text
