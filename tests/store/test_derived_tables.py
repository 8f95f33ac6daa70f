"""council-db db check: every derived row (session_stats, the day totals) against the records, and --repair.

Edits are made by hand, as a user would with sqlite3 (foreign keys off) or psql: council-db
is not told, so session_stats goes stale and the report with it, until db check finds it
and db check --repair rebuilds it; the report then equals a fresh import's."""

from __future__ import annotations

import json
import sqlite3

from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.importer import import_files
from council_db.store.derived import DERIVED, check
from tests.conftest import Cli, both_backends, record, same_numbers, scalar, write_jsonl
from tests.outlets.test_export_identical import varied_lines
from tests.realdata import MT_BENCH_ANSWERS, MT_BENCH_JUDGMENTS
from tests.store.sqlite_files import url_for

SESSION_STATS = DERIVED[:1]


def by_hand(url: str, *statements: str) -> None:
    """Statements run outside council-db: sqlite3 as its shell runs them, or plain SQLAlchemy."""
    if url.startswith("sqlite:///"):
        connection = sqlite3.connect(url.removeprefix("sqlite:///"))
        with connection:
            for statement in statements:
                connection.execute(statement)
        connection.close()
        return
    from sqlalchemy import create_engine, text

    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.begin() as connection:
        for statement in statements:
            connection.execute(text(statement))
    engine.dispose()


def checked(cli: Cli, *args: str) -> tuple[int, dict]:
    result = cli("db", "check", "--format", "json", *args)
    return result.exit_code, json.loads(result.stdout)[0]


def report(cli: Cli) -> dict:
    """The report as it is at scale: a session sample, and whole-window sums from session_stats."""
    result = cli("bias-report", "--format", "json", "--sample-sessions", "100")
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    found.pop("generated_at")
    return found


@both_backends
def test_a_fresh_import_is_true_to_its_records(db, tmp_path, cli):
    """No false alarm where numpy (at import) and SQL (the check) add in different orders:
    simulated sessions, the varied store, and the public judge data (ties, one judge)."""
    cli("simulate", "-o", str(tmp_path / "sim.jsonl"), "--sessions", "120", "--seed", "5")
    import_files(db, [str(tmp_path / "sim.jsonl"), str(write_jsonl(tmp_path / "varied.jsonl", varied_lines()))])
    import_files(db, [str(MT_BENCH_JUDGMENTS)], options=FormatOptions("fastchat-single", answers=MT_BENCH_ANSWERS))
    findings = check(db)
    assert [finding.table for finding in findings] == [table.name for table in DERIVED]
    for finding in findings:
        assert finding.rows == scalar(db, f"SELECT COUNT(*) FROM {finding.table}") > 0
        assert (finding.missing, finding.extra, finding.differing, finding.examples) == (0, 0, 0, []), finding
    assert cli("db", "check").exit_code == 0


@both_backends
def test_check_finds_hand_edits_and_repair_gives_the_report_of_a_fresh_import(cli, db_url, tmp_path):
    cli("simulate", "-o", str(tmp_path / "sim.jsonl"), "--sessions", "150", "--seed", "9")
    assert cli("import", "-q", str(tmp_path / "sim.jsonl")).exit_code == 0
    before = report(cli)
    by_hand(db_url,
            "DELETE FROM session_stats WHERE session_id IN (1, 2, 3)",
            "UPDATE scores SET score_value = 1.0 WHERE session_id = 4",
            "DELETE FROM scores WHERE session_id = 5 AND reviewer_id = (SELECT MIN(reviewer_id) FROM scores)")
    edited = report(cli)
    assert edited["window"]["records"] == before["window"]["records"] - 3 * 16  # stale: three sessions lost

    status, found = checked(cli)
    assert status == 1 and (found["missing"], found["extra"], found["differing"]) == (3, 0, 2)
    assert "missing (session_id=1, scale_id=1)" in found["examples"]

    status, found = checked(cli, "--repair")
    assert status == 0 and found["repaired"] and found["missing"] == 3
    status, found = checked(cli)
    assert status == 0 and (found["missing"], found["extra"], found["differing"], found["repaired"]) == (0, 0, 0, False)

    fresh = Cli(url_for(tmp_path / "fresh.db"))
    cli("export", "-o", str(tmp_path / "edited.jsonl"))
    assert fresh("import", "-q", str(tmp_path / "edited.jsonl")).exit_code == 0
    repaired = report(cli)
    assert repaired != edited
    assert same_numbers(repaired, report(fresh))


def test_rows_of_sessions_deleted_by_hand_are_extra_and_repair_removes_them(tmp_path):
    cli = Cli(url_for(tmp_path / "council.db"))
    assert cli("import", "-q", str(write_jsonl(tmp_path / "in.jsonl", varied_lines()))).exit_code == 0
    by_hand(cli.db, "DELETE FROM scores WHERE session_id = 2", "DELETE FROM sessions WHERE id = 2")  # FKs off
    status, found = checked(cli)
    assert status == 1 and (found["missing"], found["extra"], found["differing"]) == (0, 1, 0)
    assert checked(cli, "--repair")[0] == 0
    assert checked(cli)[1]["extra"] == 0


def test_an_answer_z_made_of_rounding_errors_is_no_false_alarm(db, tmp_path):
    """A session of the 1M simulated store whose four answers all have mean score 5.9 from
    other reviewers: answer_syy is rounding (~1e-31), not 0, so answer_z is noise, and numpy
    (at import) and SQL (the check) gave -0.24 and 0.41. The check found it "differing"."""
    names = ["anthropic/claude", "google/gemini", "meta-llama/llama", "openai/gpt-4"]
    lengths, positions = [749, 1641, 1373, 853], [1, 2, 3, 0]
    scores = [[6.6, 5.9, 6.2, 5.1], [5.2, 7.5, 5.9, 7.9], [6.4, 6.1, 7.9, 4.7], [6.1, 5.7, 5.6, 7.5]]
    lines = [record(session_id="778f5efa", reviewer_id=names[r], model_id=names[m], position=positions[m],
                    response_length_chars=lengths[m], score_value=scores[r][m]) for r in range(4) for m in range(4)]
    import_files(db, [str(write_jsonl(tmp_path / "in.jsonl", lines))])
    by_hand(db.url, "UPDATE session_stats SET score_sum = 100.30000000000003, length_score_sum = 116198.3, "
                    "answer_sxy = 4.438366953782031e-16, answer_z = 0.406188732764821")  # as the 1M import stored it
    (finding,) = check(db, tables=SESSION_STATS)
    assert finding.wrong == 0, finding.examples
    by_hand(db.url, "UPDATE session_stats SET answer_syy = 0.5")  # a real difference is still one
    assert check(db, tables=SESSION_STATS)[0].differing == 1
