"""The Python API's report is the CLI's: above the sample size it reads the same session
sample and whole-window totals, so it holds at a million sessions as the command does."""

from __future__ import annotations

import json

import council_db
from council_db.report.model import to_builtins
from tests.conftest import Cli, simulated, write_jsonl

SESSIONS = 60
SAMPLE = 20


def test_the_api_and_the_cli_give_the_same_report_above_the_sample_size(tmp_path):
    records, _ = simulated(sessions=SESSIONS, seed=5, days=60)
    url = f"sqlite:///{tmp_path / 'council.db'}"
    cli = Cli(url)
    assert cli("import", str(write_jsonl(tmp_path / "in.jsonl", records))).exit_code == 0
    as_of = "2100-01-01T00:00:00Z"
    from_cli = json.loads(cli("bias-report", "--format", "json", "--as-of", as_of,
                              "--sample-sessions", str(SAMPLE)).stdout)
    with council_db.connect(url) as db:
        from_api = to_builtins(db.report(as_of=as_of, sample_sessions=SAMPLE))
    assert from_api["window"]["sample"]["sessions"] < SESSIONS
    for report in (from_api, from_cli):
        del report["generated_at"]  # the clock when each was made
    assert from_api == from_cli


def test_the_api_reads_more_latest_sessions_than_sql_can_count_as_all_of_them_as_the_cli_does(tmp_path):
    records, _ = simulated(sessions=10, seed=6, days=5)
    url = f"sqlite:///{tmp_path / 'council.db'}"
    cli = Cli(url)
    assert cli("import", str(write_jsonl(tmp_path / "in.jsonl", records))).exit_code == 0
    as_of = "2100-01-01T00:00:00Z"
    from_cli = json.loads(cli("bias-report", "--format", "json", "--as-of", as_of,
                              "--sessions", str(10**23)).stdout)
    with council_db.connect(url) as db:
        from_api = to_builtins(db.report(as_of=as_of, sessions=10**23))
    assert from_api["window"]["sessions"] == 10
    for report in (from_api, from_cli):
        del report["generated_at"]
    assert from_api == from_cli
