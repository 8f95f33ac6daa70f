"""council-db delete --import, as a newcomer and an adversary meet it (issue 27, items 1, 10,
14 and 18): an import's own records go and no other import's, its file can always be read
again, a running import is refused, and a file imported with other options is read again,
saying so. Real files (the published MT-bench grading for FastChat's runs), the real CLI,
real processes where exit codes and stderr matter; SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections import Counter
from pathlib import Path

from tests import realdata
from tests.conftest import Cli, both_backends, run_module, scalar, session, simulated, write_jsonl
from tests.reliability import council_db_argv, kill_after_first_commit, simulated_file

RUNS = sorted({j["model"] for j in realdata.mt_bench_judgments()})


def runs(folder: Path) -> list[Path]:
    """MT-bench's single grading cut into one file per graded model, as FastChat writes one
    run per model: every run holds records of the same 160 sessions (q81/t1, ...)."""
    judgments = realdata.mt_bench_judgments()
    return [write_jsonl(folder / f"{model}_single.jsonl", [j for j in judgments if j["model"] == model])
            for model in RUNS]


def imported(cli, *args: str) -> dict:
    result = cli("import", "--format", "json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def per_model(cli) -> dict[str, int]:
    rows = json.loads(cli("sql", "SELECT m.name AS model, COUNT(*) AS n FROM scores AS s JOIN models AS m "
                                 "ON m.id = s.model_id GROUP BY m.name", "--format", "json").stdout)
    return {row["model"]: row["n"] for row in rows}


def exported(cli) -> Counter:
    result = cli("export")
    assert result.exit_code == 0, result.output
    return Counter(result.stdout.splitlines())


@both_backends
def test_deleting_one_fastchat_run_deletes_its_records_only_and_importing_it_again_restores_them(cli, db, tmp_path):
    files = runs(tmp_path)
    for path in files:
        imported(cli, "--from", "fastchat-single", str(path))
    everything, counts = exported(cli), per_model(cli)
    assert len(counts) == 4 and scalar(db, "SELECT COUNT(*) FROM sessions") == 160  # every run in every session

    done = cli("delete", "--import", "1", "--yes")  # the first run: it stored every session first

    assert done.exit_code == 0, done.output
    assert per_model(cli) == {model: n for model, n in counts.items() if model != RUNS[0]}
    assert scalar(db, "SELECT COUNT(*) FROM sessions") == 160
    assert f"deleted import 1 ({files[0]}): {counts[RUNS[0]]} records" in done.stderr
    assert "in 160 sessions, of which 160 sessions keep the records other imports stored" in done.stderr
    assert cli("db", "check").exit_code == 0
    assert imported(cli, "--from", "fastchat-single", str(files[0]))["inserted"] == counts[RUNS[0]]
    assert exported(cli) == everything and cli("db", "check").exit_code == 0


@both_backends
def test_a_file_whose_imports_were_all_deleted_is_read_again_whatever_no_op_imports_came_after(cli, tmp_path):
    records, _ = simulated(sessions=20, seed=5)
    path = write_jsonl(tmp_path / "f.jsonl", records)
    imported(cli, str(path))
    assert imported(cli, str(path))["inserted"] == 0  # import 2 reads nothing new: it stores nothing

    assert cli("delete", "--import", "1", "--yes").exit_code == 0
    assert cli("delete", "--import", "2", "--yes").exit_code == 0

    again = imported(cli, str(path))
    assert (again["inserted"], again["files"][0]["mode"]) == (len(records), "full")


def test_deleting_one_import_of_a_file_imported_twice_reads_it_again_from_where_the_gap_is(cli, tmp_path):
    records, _ = simulated(sessions=20, seed=6)
    path = write_jsonl(tmp_path / "f.jsonl", records[:160])
    imported(cli, str(path))
    write_jsonl(path, records)  # the log grew: import 2 reads the new lines only
    assert imported(cli, str(path))["inserted"] == 160

    assert cli("delete", "--import", "1", "--yes").exit_code == 0

    again = imported(cli, str(path))
    assert (again["inserted"], again["duplicates"]) == (160, 160)
    assert "reading it whole: what earlier imports of it read went with a deleted import" in again["files"][0]["note"]
    assert len(exported(cli)) == len(records)


@both_backends
def test_deleting_an_import_that_stored_no_record_deletes_its_row_and_rejected_lines(cli, db, tmp_path):
    result = cli("import", str(write_jsonl(tmp_path / "bad.jsonl", ["{not json", '{"schema_version": 2}'])))
    assert result.exit_code == 3

    done = cli("delete", "--import", "1")

    assert done.exit_code == 0 and "deleted import 1" in done.stderr and "2 rejected lines" in done.stderr
    assert scalar(db, "SELECT COUNT(*) FROM imports") == 0 and scalar(db, "SELECT COUNT(*) FROM rejected_lines") == 0


def test_an_import_id_that_does_not_exist_is_exit_1_naming_the_ids_that_do(cli, db_path, tmp_path):
    path = write_jsonl(tmp_path / "f.jsonl", simulated(sessions=2, seed=1)[0])
    for _ in range(3):
        cli("import", str(path))
    cli("delete", "--import", "2", "--yes")

    result = run_module("--db", str(db_path), "delete", "--import", "7", "--yes")

    assert result.returncode == 1
    assert result.stderr.decode() == ('error: no import 7: the imports are 1, 3 (council-db sql "SELECT id, source, '
                                      'status FROM imports")\n')


def test_the_import_summary_names_the_import_and_delete_help_names_its_column(cli, tmp_path):
    result = cli("import", str(write_jsonl(tmp_path / "f.jsonl", simulated(sessions=1, seed=1)[0])))

    assert f"{tmp_path / 'f.jsonl'} (import 1): 16 lines, 16 new records" in result.stderr
    shown = " ".join(cli("delete", "--help").stdout.split())
    assert "SELECT id, source, status FROM imports" in shown and "import_id" not in shown


@both_backends
def test_records_another_import_had_read_first_come_back_when_its_file_is_imported_again(cli, tmp_path):
    records, _ = simulated(sessions=10, seed=7)
    first = write_jsonl(tmp_path / "first.jsonl", records)
    copy = write_jsonl(tmp_path / "copy.jsonl", records[80:] + simulated(sessions=2, seed=8)[0])
    imported(cli, str(first))
    assert imported(cli, str(copy))["duplicates"] == 80  # the copy's first 80 records were stored by import 1
    before = exported(cli)

    done = cli("delete", "--import", "1", "--yes")

    again = imported(cli, str(copy))
    assert (again["inserted"], again["duplicates"]) == (80, 32)
    gone = {r["session_id"] for r in records[:80]}
    assert exported(cli) == Counter(line for line in before if json.loads(line)["session_id"] not in gone)
    assert cli("db", "check").exit_code == 0
    assert f"import 2 ({copy}) had read records that went with it: import its file again" in done.stderr


def test_a_file_imported_again_with_other_options_is_read_again_and_says_why(cli, tmp_path):
    judgments = str(realdata.MT_BENCH_JUDGMENTS)
    imported(cli, "--from", "fastchat-single", judgments)  # without --answers: every length unknown

    with_answers = cli("import", "--from", "fastchat-single", judgments, "--answers", str(realdata.MT_BENCH_ANSWERS))

    assert "imported before with other options (import 1: no --answers, --bench or --judge): reading it whole" \
           in with_answers.stderr and "delete --import 1 first to store them as read now" in with_answers.stderr
    assert "800 lines, 0 new records, 800 already stored" in with_answers.stderr
    assert cli("delete", "--import", "1", "--yes").exit_code == 0
    lengths = imported(cli, "--from", "fastchat-single", judgments, "--answers", str(realdata.MT_BENCH_ANSWERS))
    assert (lengths["inserted"], lengths["unknown_length"]) == (800, 157)
    bench = imported(cli, "--from", "fastchat-single", judgments, "--bench", "mt_bench")
    assert bench["inserted"] == 800  # the same lines under the bench's session keys


@both_backends
def test_a_running_import_cannot_be_deleted_and_once_finished_it_can(cli, db_url, db, tmp_path):
    """A real import in another process, reading stdin (in blocks of 1 MiB): its first part
    committed, its last line not yet written."""
    data = write_jsonl(tmp_path / "in.jsonl", simulated(sessions=400, seed=9)[0]).read_bytes()
    assert len(data) > 2 * 2**20
    last_line = data.rindex(b"\n", 0, len(data) - 1) + 1
    target: Path | str = Path(db_url.removeprefix("sqlite:///")) if db_url.startswith("sqlite") else db_url
    importer = subprocess.Popen(council_db_argv(target, "import", "-q", "-", commit_every=16),
                                stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        importer.stdin.write(data[:last_line])
        importer.stdin.flush()
        deadline = time.monotonic() + 60
        while not scalar(db, "SELECT COUNT(*) FROM imports WHERE status = 'running' AND inserted > 0"):
            assert time.monotonic() < deadline and importer.poll() is None
            time.sleep(0.05)

        refused = run_module("--db", str(target), "delete", "--import", "1", "--yes")

        assert refused.returncode == 1 and b"Traceback" not in refused.stderr
        assert refused.stderr.decode().startswith("error: import 1 (-) is still running")
        importer.stdin.write(data[last_line:])
        importer.stdin.close()
        assert importer.wait(timeout=120) == 0, importer.stderr.read().decode()
    finally:
        importer.kill()
    assert scalar(db, "SELECT COUNT(*) FROM scores") == 400 * 16
    assert cli("delete", "--import", "1", "--yes").exit_code == 0
    assert scalar(db, "SELECT COUNT(*) FROM sessions") == 0 and cli("db", "check").exit_code == 0



def test_records_of_imports_made_before_revision_0013_come_back_when_their_files_are_imported_again(cli, tmp_path):
    """Before 0013 a record named no import: it belongs to its session's first import, so
    deleting that import takes the records a later import added to its sessions. The upgrade
    marks every import of that time that read records as possibly holding some of theirs."""
    first = write_jsonl(tmp_path / "first.jsonl", session("s1", reviewers=3))
    later = write_jsonl(tmp_path / "later.jsonl", session("s1")[12:] + session("s2"))  # s1's fourth reviewer
    imported(cli, str(first))
    imported(cli, str(later))
    assert cli("db", "downgrade", "0011").exit_code == 0 and cli("db", "upgrade").exit_code == 0

    done = cli("delete", "--import", "1", "--yes")

    assert done.exit_code == 0, done.output
    assert imported(cli, str(later))["inserted"] == 4  # s1's records of the later file, read again
    alone = Cli(tmp_path / "alone.db")
    imported(alone, str(later))
    assert exported(cli) == exported(alone) and cli("db", "check").exit_code == 0
    assert f"import 2 ({later}) had read records that went with it" in done.stderr


def test_an_import_killed_midway_can_be_deleted_and_its_file_is_read_again(cli, db, db_path, tmp_path):
    source = simulated_file(tmp_path / "big.jsonl", 600, seed=4)
    assert kill_after_first_commit(council_db_argv(db_path, "import", "-q", str(source), commit_every=500),
                                   db_path).killed
    assert scalar(db, "SELECT status FROM imports") == "running"  # as the killed process left it

    done = cli("delete", "--import", "1", "--yes")

    assert done.exit_code == 0, done.output
    assert scalar(db, "SELECT COUNT(*) FROM scores") == 0 and cli("db", "check").exit_code == 0
    assert imported(cli, str(source))["inserted"] == 600 * 16
