"""council-db db copy: a laptop's database into the team's, on natural keys, idempotently."""

from __future__ import annotations

import json
import subprocess
import sys

from council_db.outlets.export import ExportFilter, records
from tests.conftest import Cli, both_backends, record, same_numbers, scalar, session, write_jsonl


def laptop(tmp_path, name: str, lines: list) -> Cli:
    """A local SQLite database holding ``lines``."""
    local = Cli(tmp_path / f"{name}.db")
    result = local("import", "-q", str(write_jsonl(tmp_path / f"{name}.jsonl", lines)))
    assert result.exit_code == 0, result.output
    return local


def shareable(key: str, **changes) -> list[dict]:
    return session(key, consent_level=2, **changes)


def exported(db_or_cli) -> list[dict]:
    if isinstance(db_or_cli, Cli):
        return sorted((json.loads(line) for line in db_or_cli("export").stdout.splitlines()), key=json.dumps)
    return sorted(records(db_or_cli, ExportFilter()), key=json.dumps)


def copy_json(local: Cli, target: str, *args: str) -> dict:
    result = local("db", "copy", "--to", target, "--format", "json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@both_backends
def test_copy_moves_every_shareable_record_field_for_field_and_keeps_local_only_ones_here(tmp_path, db, db_url):
    odd = [record(session_id="mixed", position=p, consent_level=2, timestamp=t)
           for p, t in enumerate(["2025-01-01T00:00:00Z", "2025-01-01T00:00:00Z", "2025-01-02T09:00:00+02:00"])]
    local = laptop(tmp_path, "alice", shareable("a", schema_version=1) + shareable("b", query_hash="0123456789abcdef")
                   + odd + session("private", consent_level=1) + [record(session_id="mixed", position=5)])
    summary = copy_json(local, db_url)
    assert (summary["copied"], summary["inserted"], summary["duplicates"], summary["left_out"]) == (35, 35, 0, 17)
    shared = [r for r in exported(local) if r["consent_level"] >= 2]
    assert exported(db) == shared
    assert scalar(db, "SELECT source_kind FROM imports") == "copy"
    assert scalar(db, "SELECT COUNT(*) FROM sessions WHERE import_id IS NULL") == 0


@both_backends
def test_copying_again_adds_nothing(tmp_path, db, db_url):
    local = laptop(tmp_path, "alice", shareable("a") + shareable("b"))
    copy_json(local, db_url)
    again = copy_json(local, db_url)
    assert (again["inserted"], again["duplicates"]) == (0, 32)
    assert scalar(db, "SELECT COUNT(*) FROM scores") == 32


def test_laptops_copying_overlapping_data_at_once_lose_and_double_nothing(tmp_path, pg_url):
    keys = [f"s{n:02d}" for n in range(30)]
    laptops = [laptop(tmp_path, f"laptop{n}", [line for key in keys[n * 8:n * 8 + 14] for line in shareable(key)])
               for n in range(3)]
    processes = [subprocess.Popen([sys.executable, "-m", "council_db", "--db", str(one.db), "db", "copy",
                                   "--to", pg_url, "--format", "json"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE) for one in laptops]
    outputs = [process.communicate(timeout=300) for process in processes]
    assert all(process.returncode == 0 for process in processes), [err for _, err in outputs]
    sessions = len({key for n in range(3) for key in keys[n * 8:n * 8 + 14]})
    assert sum(json.loads(out)["inserted"] for out, _ in outputs) == sessions * 16
    team = Cli(pg_url)
    assert len(exported(team)) == sessions * 16
    assert {json.dumps(r) for one in laptops for r in exported(one)} == {json.dumps(r) for r in exported(team)}


def test_the_copy_gives_the_same_report_as_the_laptop(tmp_path, pg_url):
    local = Cli(tmp_path / "alice.db")
    local("simulate", "-o", str(tmp_path / "sim.jsonl"), "--sessions", "60", "--seed", "4")
    local("import", "-q", str(tmp_path / "sim.jsonl"))
    copy_json(local, pg_url, "--min-consent", "1")
    here, there = (json.loads(Cli(url)("bias-report", "--format", "json").stdout) for url in (local.db, pg_url))
    here.pop("generated_at"), there.pop("generated_at")
    assert same_numbers(here, there)


def test_copying_a_database_into_itself_is_refused(tmp_path):
    local = laptop(tmp_path, "alice", shareable("a"))
    result = local("db", "copy", "--to", local.db)
    assert result.exit_code == 1 and "names the database being copied" in str(result.exception)


def test_the_servers_records_copy_back_into_a_laptop_file(tmp_path, pg_url):
    team = Cli(pg_url)
    team("import", "-q", str(write_jsonl(tmp_path / "team.jsonl", shareable("a") + shareable("b"))))
    summary = copy_json(team, str(tmp_path / "mine.db"))
    assert (summary["inserted"], summary["left_out"]) == (32, 0)
    assert exported(Cli(tmp_path / "mine.db")) == exported(team)


@both_backends
def test_a_copy_keeps_which_reviewers_are_human_raters_or_gold_labels(tmp_path, db, db_url):
    lines = [{**line, "reviewer_kind": "human"} if line["reviewer_id"] == "vendor/model-1" else line
             for line in shareable("a")]
    local = laptop(tmp_path, "alice", lines)

    copy_json(local, db_url)

    with db.reading() as reader:
        assert dict(reader.rows("SELECT name, reviewer_kind FROM models WHERE reviewer_kind <> 'judge'")) == {
            "vendor/model-1": "human"}
