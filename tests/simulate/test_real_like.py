"""The simulator can write data shaped like real judge data (issue 15): tied timestamps, whole
scores 1..10, sessions where a reviewer scores every answer alike; and, with those options off,
exactly the bytes it wrote before they existed."""

from __future__ import annotations

import hashlib
import io
import json
import math
from collections import defaultdict
from datetime import datetime, timezone

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from council_db.cli.simulate import command
from council_db.simulate import SimulationConfig, SimulationConfigError, write_jsonl

END = datetime(2025, 1, 1, tzinfo=timezone.utc)

app = typer.Typer()
app.callback()(lambda: None)  # keep "simulate" a subcommand, as in the real CLI
app.command("simulate")(command)


def simulate(**options) -> tuple[list[dict], dict]:
    out = io.StringIO()
    truth = write_jsonl(SimulationConfig(end=END, **options), out)
    return [json.loads(line) for line in out.getvalue().splitlines()], truth


def output_hash(**options) -> str:
    out = io.BytesIO()
    write_jsonl(SimulationConfig(end=END, **options), out)
    return hashlib.sha256(out.getvalue()).hexdigest()


def scores_by(records: list[dict], *keys: str) -> dict[tuple, list[float]]:
    groups: dict[tuple, list[float]] = defaultdict(list)
    for record in records:
        groups[tuple(record[k] for k in keys)].append(record["score_value"])
    return groups


# Hashes of the output before the real-data options existed: with them off, seeds keep their bytes.
@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, "e542d33b7f63d8dfecf9b5bc5773ebd1354b846d7fa3e7851986932eea6207c8"),
        (dict(sessions=300, seed=5, anomaly_rate=0.1, unscored_rate=0.05, drift={"openai/gpt-4o": 1.0}),
         "2803bdf1f66b5740d5b907636aabfde91bedcc7291efb48fe7d46ab49e0f42a2"),
        (dict(sessions=100, seed=9, candidates_per_session=3, drift_at=0.4, drift={"openai/gpt-4o": 1.0},
              scoring_share={"openai/gpt-4o": {"google/gemini-1.5-pro": 0.3}}, schema_version="1.1.0"),
         "47d36df57a64a8190f8ca9dd33c91d54635a13db514b7f4492197d01b15a3f36"),
    ],
)
def test_with_the_real_data_options_off_a_seed_writes_the_same_bytes_as_before(options, expected) -> None:
    assert output_hash(**options) == expected
    assert output_hash(**options, batch_size=1, integer_scale=False, constant_share=0.0) == expected


@pytest.mark.parametrize(("sessions", "batch_size"), [(100, 10), (101, 10), (30, 7), (20, 50)])
def test_batches_of_sessions_share_one_timestamp(sessions: int, batch_size: int) -> None:
    records, truth = simulate(sessions=sessions, batch_size=batch_size)
    order = list(dict.fromkeys(r["session_id"] for r in records))
    stamp = {r["session_id"]: r["timestamp"] for r in records}
    assert len(set(stamp.values())) == math.ceil(sessions / batch_size)
    for first in range(0, sessions, batch_size):
        assert len({stamp[s] for s in order[first:first + batch_size]}) == 1
    times = [datetime.fromisoformat(stamp[s]) for s in order]
    assert times == sorted(times)
    assert datetime.fromisoformat(truth["start"]) < times[0] and times[-1] <= END
    assert truth["batch_size"] == batch_size


def test_batching_changes_only_the_timestamps() -> None:
    plain, _ = simulate(sessions=60, seed=4, self_preference=0.5)
    batched, _ = simulate(sessions=60, seed=4, self_preference=0.5, batch_size=20)
    for a, b in zip(plain, batched, strict=True):
        assert a.pop("timestamp") != b.pop("timestamp")
        assert a == b


def test_integer_scale_writes_whole_scores_from_1_to_10() -> None:
    records, truth = simulate(sessions=300, integer_scale=True, noise_sd=3.0, anomaly_rate=0.05)
    scores = {r["score_value"] for r in records}
    assert scores == {float(x) for x in range(1, 11)}
    assert truth["integer_scale"] is True
    plain, _ = simulate(sessions=300, noise_sd=3.0, anomaly_rate=0.05)
    assert len({r["score_value"] for r in plain}) > 10


def test_constant_sessions_are_planted_at_the_share_and_listed_in_truth() -> None:
    records, truth = simulate(sessions=1000, seed=2, constant_share=0.15)
    listed = set(truth["constant_sessions"])
    assert len(listed) / 1000 == pytest.approx(0.15, abs=0.035)  # binomial SD 0.011
    for (session, _), scores in scores_by(records, "session_id", "reviewer_id").items():
        assert (len(set(scores)) == 1) == (session in listed)  # tenths and noise: others never tie all 4


def test_in_a_constant_session_each_reviewer_gives_its_own_mean_score() -> None:
    """The reviewer's level stays (harsh stays harsh); only differences between answers vanish."""
    offsets = {"openai/gpt-4o": -1.0, "google/gemini-1.5-pro": 1.0}
    plain, _ = simulate(sessions=200, seed=6, reviewer_offsets=offsets)
    flat, truth = simulate(sessions=200, seed=6, reviewer_offsets=offsets, constant_share=0.3)
    before, after = scores_by(plain, "session_id", "reviewer_id"), scores_by(flat, "session_id", "reviewer_id")
    assert before.keys() == after.keys()
    listed = set(truth["constant_sessions"])
    for key, scores in after.items():
        if key[0] in listed:
            tenths = np.floor(np.mean(np.rint(np.array(before[key]) * 10)) + 0.5)  # halves up
            assert set(scores) == {tenths / 10}
        else:
            assert scores == before[key]


def test_a_constant_score_rounds_a_half_up_so_no_reviewer_level_moves_with_its_parity() -> None:
    """Halves to even would put 6.5 at 6 and 7.5 at 8: a reviewer's level would shift by whether
    it sits near an odd or an even score (a severity bias of ~0.006 at 15% constant sessions)."""
    plain, _ = simulate(sessions=400, seed=8, integer_scale=True)
    flat, truth = simulate(sessions=400, seed=8, integer_scale=True, constant_share=0.5)
    before, after = scores_by(plain, "session_id", "reviewer_id"), scores_by(flat, "session_id", "reviewer_id")
    halves = [key for key in after if key[0] in set(truth["constant_sessions"]) and np.mean(before[key]) % 1 == 0.5]
    assert len(halves) > 20
    assert all(after[key][0] == np.mean(before[key]) + 0.5 for key in halves)


def test_constant_sessions_on_the_integer_scale_are_whole_scores() -> None:
    records, truth = simulate(sessions=200, integer_scale=True, constant_share=0.5)
    listed = set(truth["constant_sessions"])
    flat = scores_by([r for r in records if r["session_id"] in listed], "session_id", "reviewer_id")
    assert flat and all(len(set(s)) == 1 and s[0] == int(s[0]) for s in flat.values())


def test_cli_options_match_the_config_fields(tmp_path) -> None:
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["simulate", "-o", str(out), "--end", END.isoformat(), "--sessions", "50",
                                      "--batch-size", "8", "--integer-scale", "--constant-share", "0.15"])
    assert result.exit_code == 0, result.output
    expected = io.BytesIO()
    write_jsonl(SimulationConfig(sessions=50, end=END, batch_size=8, integer_scale=True, constant_share=0.15),
                expected)
    assert out.read_bytes() == expected.getvalue()


@pytest.mark.parametrize(("args", "expected"), [(["--batch-size", "0"], "--batch-size"),
                                                (["--constant-share", "1.5"], "--constant-share")])
def test_bad_real_data_options_exit_2_naming_the_option(tmp_path, args: list[str], expected: str) -> None:
    result = CliRunner().invoke(app, ["simulate", "-o", str(tmp_path / "out.jsonl"), *args])
    assert result.exit_code == 2 and expected in result.output


@pytest.mark.parametrize(("field", "value"), [("batch_size", 0), ("constant_share", -0.1), ("constant_share", 2.0)])
def test_out_of_range_real_data_fields_are_refused(field: str, value: float) -> None:
    with pytest.raises(SimulationConfigError) as error:
        SimulationConfig(**{field: value})
    assert error.value.field == field
