"""Record times must be instants Python can hold: years 0001-9999 once converted to UTC.

"9999-12-31T23:59:59-14:00" is a valid ISO-8601 time whose UTC instant is in year 10000;
stored, it broke every report that printed a time. Such a line is rejected at the door, by
line and field, on every route a time comes in (import, both decoding paths, ingest, the
time options of the commands); the edges of the range itself are kept and read back exactly.
"""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from council_db.ingest.lines import LineBatch, parse_batch
from council_db.ingest.normalise import Normaliser
from tests.conftest import both_backends, record, run_module, session, simulated, write_jsonl
from tests.ingest.test_record_session import session_file

# UTC instants in year 10000 and in year 0
OUT_OF_RANGE = ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00", "9999-12-31T23:00:00-01:00"]
# the first and last microsecond Python can hold, written several ways
EDGES = ["0001-01-01T00:00:00Z", "0001-01-01T14:00:00+14:00", "0001-01-01T00:00:00",
         "9999-12-31T23:59:59.999999Z", "9999-12-31T09:59:59.999999-14:00"]
FIX = "write the time in UTC within years 0001-9999"


@both_backends
def test_a_time_outside_years_1_to_9999_in_utc_is_rejected_by_line_and_field_and_reports_still_run(cli, tmp_path):
    lines = session("good") + [record(session_id=f"far-{i}", timestamp=t) for i, t in enumerate(OUT_OF_RANGE)]
    result = cli("import", str(write_jsonl(tmp_path / "in.jsonl", lines)), "--format", "json")
    assert result.exit_code == 3, result.output
    assert json.loads(result.stdout)["inserted"] == 16
    assert f'line 17: timestamp: "9999-12-31T23:59:59-14:00" is outside years 0001-9999 in UTC; {FIX}' \
        in result.stderr
    shown = json.loads(cli("rejected", "--format", "json").stdout)
    assert [(r["line_number"], r["field"]) for r in shown] == [(17, "timestamp"), (18, "timestamp"), (19, "timestamp")]
    for command in (["stats"], ["bias-report"], ["leaderboard"], ["audit", "good"], ["export"]):
        done = cli(*command)
        assert done.exit_code == 0, (command, done.output)


@both_backends
def test_the_first_and_last_microsecond_of_the_range_are_kept_and_read_back_exactly(cli, tmp_path):
    lines = [record(session_id=f"edge-{i}", timestamp=t) for i, t in enumerate(EDGES)]
    assert cli("import", str(write_jsonl(tmp_path / "in.jsonl", lines))).exit_code == 0
    stats = json.loads(cli("stats", "--format", "json").stdout)
    assert stats["window"] == {"start": "0001-01-01T00:00:00Z", "end": "9999-12-31T23:59:59.999999Z"}
    assert cli("sessions").exit_code == 0
    report = cli("bias-report", "--format", "json")
    assert report.exit_code == 0, report.output
    assert json.loads(report.stdout)["window"]["end"] == "9999-12-31T23:59:59.999999Z"


@pytest.mark.parametrize("end, days", [("0001-03-01", 40), ("9999-12-31T23:59:59.999999", 40)])
def test_sessions_in_the_first_and_last_weeks_of_the_range_go_through_every_time_analysis(cli, tmp_path, end, days):
    records, _ = simulated(sessions=12, seed=5, end=datetime.fromisoformat(end), days=days)
    assert cli("import", "-q", str(write_jsonl(tmp_path / "in.jsonl", records))).exit_code == 0
    for every in ("1d", "7d", "30d"):
        done = cli("trends", "--every", every, "--format", "json")
        assert done.exit_code == 0, (every, done.output, done.exception)
        assert all("0001-01-01" <= row["period_start"] for row in json.loads(done.stdout)["series"])
    for command in (["bias-report", "--format", "html"], ["anomalies"], ["bias-report", "--days", "1e300"],
                    ["leaderboard"], ["stats"]):
        done = cli(*command)
        assert done.exit_code == 0, (command, done.output, done.exception)


def test_a_simulation_reaching_back_before_year_1_is_a_usage_error(cli):
    done = cli("simulate", "-o", "-", "--end", "0001-02-01", "--days", "90")
    assert done.exit_code == 2 and "--end" in done.output and "after 0001-01-01" in done.output


def _normalised(lines: list[bytes]):
    batch = LineBatch(1, lines, 0)
    return Normaliser().rows(parse_batch(batch), batch)


@pytest.mark.parametrize("timestamp", OUT_OF_RANGE + EDGES)
def test_the_fast_path_and_pydantic_judge_a_time_at_the_edge_of_the_range_alike(timestamp):
    line = json.dumps(record(timestamp=timestamp)).encode()
    # a bracket keeps a line out of the joined batch that msgspec decodes: pydantic reads it alone
    alone = line[:-1] + b', "unknown": [1]}'
    fast, authority = _normalised([line, line]), _normalised([alone, alone])
    assert len(fast.rows) == len(authority.rows)
    assert [(bad.line_number, bad.field, bad.reason) for bad in fast.rejected] == \
        [(bad.line_number, bad.field, bad.reason) for bad in authority.rejected]
    assert len(fast.rows) == (2 if timestamp in EDGES else 0)


def test_ingest_refuses_a_session_whose_time_is_outside_the_range_in_one_line(db_path, tmp_path):
    path = session_file(tmp_path, timestamp="0001-01-01T00:00:00+14:00")
    done = run_module("--db", str(db_path), "ingest", str(path))
    assert done.returncode == 1
    error = done.stderr.decode().splitlines()[-1]  # after "created council-db database ..."
    assert error.startswith("error: ") and error.endswith("; nothing was stored")
    assert "Traceback" not in done.stderr.decode()
    assert f'timestamp: "0001-01-01T00:00:00+14:00" is outside years 0001-9999 in UTC; {FIX}' in error


@pytest.mark.parametrize("args", [
    ("bias-report", "--since"), ("bias-report", "--until"), ("bias-report", "--as-of"), ("leaderboard", "--since"),
    ("trends", "--since"), ("anomalies", "--until"), ("export", "--since"), ("export", "--until"),
    ("push", "--endpoint", "http://127.0.0.1:9/", "--dry-run", "--since"), ("simulate", "-o", "-", "--end"),
], ids=" ".join)
@pytest.mark.parametrize("value", ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00"])
def test_a_time_option_outside_the_range_is_a_usage_error_not_a_traceback(cli, args, value):
    done = cli(*args, value)
    assert done.exit_code == 2, (done.output, done.exception)
    assert "0001-9999" in done.output and "Traceback" not in done.output
