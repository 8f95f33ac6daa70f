"""Above --sample-sessions sessions, trends, anomalies, leaderboard and scores' calibration read the bias
report's sample of the window (a million sessions' records would take minutes and gigabytes)
and say so with its n (anomalies --every-session tests every session against the sample's
fit); at or below it, they read every session, as before."""

from __future__ import annotations

import json

import pytest

from council_db.analysis.aggregation import Method
from council_db.analysis.aggregation.view import Settings, session_scores
from council_db.store.database import open_database
from tests.conftest import Cli, simulated, write_jsonl

SESSIONS = 60
SAMPLE = 20


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Cli:
    folder = tmp_path_factory.mktemp("sampled")
    records, _ = simulated(sessions=SESSIONS, seed=11, days=60)
    cli = Cli(f"sqlite:///{folder / 'council.db'}")
    assert cli("import", str(write_jsonl(folder / "in.jsonl", records))).exit_code == 0
    return cli


def _report_sample(store: Cli) -> int:
    report = json.loads(store("bias-report", "--format", "json", "--sample-sessions", str(SAMPLE)).stdout)
    return report["window"]["sample"]["sessions"]


def test_trends_above_the_sample_size_analyse_the_reports_sample_and_say_so(store):
    n = _report_sample(store)
    result = store("trends", "--format", "json", "--sample-sessions", str(SAMPLE))
    assert result.exit_code == 0, result.output
    trends = json.loads(result.stdout)
    assert trends["sample"] == {"sessions": n, "of": SESSIONS} and trends["sessions"] == n < SESSIONS
    assert f"a sample of {n:,} of the window's {SESSIONS:,} sessions" in result.stderr


def test_anomalies_above_the_sample_size_say_how_many_of_the_window_they_tested(store):
    n = _report_sample(store)
    result = store("anomalies", "--all", "--format", "json", "--sample-sessions", str(SAMPLE))
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)) == n
    assert f"a sample of {n:,} of the window's {SESSIONS:,} sessions tested" in result.stderr


def test_anomalies_with_every_session_test_every_session_against_the_samples_fit_and_say_so(store):
    n = _report_sample(store)
    result = store("anomalies", "--all", "--format", "json", "--sample-sessions", str(SAMPLE), "--every-session")
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)) == SESSIONS
    assert (f"every one of the window's {SESSIONS:,} sessions tested, against the joint model fitted on a sample "
            f"of {n:,}") in result.stderr


@pytest.mark.parametrize("method", ["quality", "normalized"])
def test_the_leaderboard_above_the_sample_size_names_its_sample_in_window_calibration_and_warnings(store, method):
    n = _report_sample(store)
    result = store("leaderboard", "--method", method, "--format", "json", "--sample-sessions", str(SAMPLE))
    assert result.exit_code == 0, result.output
    board = json.loads(result.stdout)
    assert board["window"]["sessions"] == n and board["window"]["sample"] == {"sessions": n, "of": SESSIONS}
    assert board["calibration"]["sessions"] == n
    assert board["calibration"]["source"].endswith(f"a sample of the window's {SESSIONS:,}")
    assert any(f"a sample of {n:,} of the window's {SESSIONS:,} sessions" in w for w in board["warnings"])


def test_scores_estimate_offsets_over_the_reports_sample_of_the_stored_sessions(store):
    n = _report_sample(store)
    db = open_database(store.db, notify=lambda _: None)
    try:
        key = json.loads(store("sessions", "--format", "json").stdout)[0]["session_id"]
        result = session_scores(db, key, Settings(Method.bias_adjusted, {}, {}), sample_sessions=SAMPLE)
    finally:
        db.engine.dispose()
    assert result["calibration"]["sessions"] == n
    assert result["calibration"]["source"].endswith(f"a sample of the window's {SESSIONS:,}")


@pytest.mark.parametrize("command", [["trends", "--format", "json"], ["anomalies", "--all", "--format", "json"],
                                     ["leaderboard", "--format", "json"],
                                     ["leaderboard", "--method", "normalized", "--format", "json"]])
def test_at_or_below_the_sample_size_a_command_reads_every_session_and_names_no_sample(store, command):
    default = store(*command)
    everything = store(*command, "--sample-sessions", "0")
    just_enough = store(*command, "--sample-sessions", str(SESSIONS))
    assert default.exit_code == 0, default.output
    assert default.stdout == everything.stdout == just_enough.stdout
    assert '"sample"' not in default.stdout and "a sample of" not in default.stdout + default.stderr


def test_the_commands_default_sample_size_is_the_reports():
    from council_db.analysis.loading.window import SAMPLE_SESSIONS
    from council_db.cli.window_options import SAMPLE_SESSIONS as OPTION_DEFAULT

    assert OPTION_DEFAULT == SAMPLE_SESSIONS
