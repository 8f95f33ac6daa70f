"""The simulator writes llm-council's record format and plants effects we can find again."""

from __future__ import annotations

import gzip
import io
import json
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
import typer
from click.testing import Result
from typer.testing import CliRunner

from council_db.cli.simulate import command
from council_db.simulate import SimulationConfig, SimulationConfigError, write_jsonl
from council_db.text_values import parse_floats, parse_mapping, parse_utc_datetime

END = "2025-12-17T00:00:00+00:00"
KEYS = [
    "schema_version",
    "session_id",
    "timestamp",
    "consent_level",
    "reviewer_id",
    "model_id",
    "position",
    "response_length_chars",
    "score_value",
    "score_scale",
    "council_config_version",
    "query_hash",
    "query_metadata",
]
# What llm-council repeats on every record of a session.
ENVELOPE = ["schema_version", "session_id", "timestamp", "consent_level", "council_config_version",
            "query_hash", "query_metadata"]
GPT, CLAUDE, GEMINI, LLAMA = SimulationConfig().models

app = typer.Typer()
app.callback()(lambda: None)  # keep "simulate" a subcommand, as in the real CLI
app.command("simulate")(command)
runner = CliRunner()


def run(*args: str) -> Result:
    return runner.invoke(app, ["simulate", "--end", END, *args])


def simulate(tmp_path: Path, *args: str) -> tuple[list[dict], dict]:
    """Run the command into tmp_path; return the parsed records and the truth."""
    out, truth = tmp_path / "out.jsonl", tmp_path / "truth.json"
    result = run("-o", str(out), "--truth", str(truth), *args)
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in out.read_text().splitlines()]
    return records, json.loads(truth.read_text())


def by(records: list[dict], *keys: str) -> dict[tuple, list[dict]]:
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for record in records:
        groups[tuple(record[k] for k in keys)].append(record)
    return groups


def flat(text: str) -> str:
    """CLI output without rich's box drawing and line wrapping."""
    return " ".join(text.replace("│", " ").split())


# --------------------------------------------------------------------------- format


def test_same_seed_gives_identical_bytes_and_another_seed_does_not(tmp_path: Path) -> None:
    outputs = []
    for name, seed in (("a", "7"), ("b", "7"), ("c", "8")):
        run("-o", str(tmp_path / name), "--seed", seed, "--sessions", "30", "--anomalies", "0.2")
        outputs.append((tmp_path / name).read_bytes())
    assert outputs[0] == outputs[1]
    assert outputs[0] != outputs[2]


def test_lines_are_exactly_what_llm_council_json_dumps_writes(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    run("-o", str(out), "--sessions", "20")
    for line in out.read_text().splitlines():
        record = json.loads(line)
        assert list(record) == KEYS
        assert json.dumps(record) == line
        assert record["schema_version"] == "1.2.0"
        assert record["score_scale"] == "1-10"
        assert record["query_hash"] is None
        assert set(record["query_metadata"]) == {"category", "token_bucket", "language"}
        assert datetime.fromisoformat(record["timestamp"]).utcoffset().total_seconds() == 0
        assert isinstance(record["score_value"], float) and 1.0 <= record["score_value"] <= 10.0


def test_cli_defaults_match_simulation_config_defaults(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    assert run("-o", str(out)).exit_code == 0
    expected = io.BytesIO()
    write_jsonl(SimulationConfig(end=parse_utc_datetime(END)), expected)
    assert out.read_bytes() == expected.getvalue()


def test_each_session_has_reviewers_times_candidates_records(tmp_path: Path) -> None:
    models = "m1,m2,m3,m4,m5"
    records, truth = simulate(
        tmp_path, "--sessions", "40", "--models", models, "--reviewers", "j1,j2,m1",
        "--candidates-per-session", "3",
    )
    sessions = by(records, "session_id")
    assert len(sessions) == truth["sessions"] == 40
    assert len(records) == truth["records"] == 40 * 3 * 3
    for session in sessions.values():
        answers = by(session, "reviewer_id")
        assert sorted(answers) == [("j1",), ("j2",), ("m1",)]
        candidate_sets = {frozenset(r["model_id"] for r in rs) for rs in answers.values()}
        assert len(candidate_sets) == 1 and len(next(iter(candidate_sets))) == 3
        for same_answer in by(session, "model_id").values():
            assert len({r["response_length_chars"] for r in same_answer}) == 1
        assert len({json.dumps([r[k] for k in ENVELOPE]) for r in session}) == 1
    assert len({r["model_id"] for r in records}) == 5


def test_sessions_are_in_time_order_within_the_window(tmp_path: Path) -> None:
    records, truth = simulate(tmp_path, "--sessions", "50", "--days", "10")
    stamps = [datetime.fromisoformat(rs[0]["timestamp"]) for rs in by(records, "session_id").values()]
    assert stamps == sorted(stamps)
    start, end = datetime.fromisoformat(truth["start"]), datetime.fromisoformat(truth["end"])
    assert (end - start).days == 10
    assert start < stamps[0] and stamps[-1] <= end


def test_positions_per_reviewer_are_a_permutation_of_display_slots(tmp_path: Path) -> None:
    records, _ = simulate(tmp_path, "--sessions", "30", "--candidates-per-session", "3")
    for answers in by(records, "session_id", "reviewer_id").values():
        assert sorted(r["position"] for r in answers) == [0, 1, 2]


def test_one_shuffle_per_session_unless_per_reviewer_shuffle(tmp_path: Path) -> None:
    def orders(records: list[dict]) -> list[int]:
        """Number of distinct display orders among the reviewers of each session."""
        counts = []
        for session in by(records, "session_id").values():
            seen = by(session, "reviewer_id").values()
            counts.append(len({frozenset((r["model_id"], r["position"]) for r in rs) for rs in seen}))
        return counts

    shared, _ = simulate(tmp_path, "--sessions", "30")
    assert set(orders(shared)) == {1}
    separate, _ = simulate(tmp_path, "--sessions", "30", "--per-reviewer-shuffle")
    assert max(orders(separate)) > 1


def test_old_schema_positions_are_rankings_best_first(tmp_path: Path) -> None:
    records, truth = simulate(tmp_path, "--sessions", "50", "--schema-version", "1.1.0")
    assert truth["position_meaning"] == "ranking"
    assert {r["schema_version"] for r in records} == {"1.1.0"}
    for answers in by(records, "session_id", "reviewer_id").values():
        scores = [r["score_value"] for r in sorted(answers, key=lambda r: r["position"])]
        assert scores == sorted(scores, reverse=True)


def test_gzip_output_is_readable_and_reproducible(tmp_path: Path) -> None:
    plain, zipped, flagged = tmp_path / "a.jsonl", tmp_path / "b.jsonl.gz", tmp_path / "c.jsonl"
    run("-o", str(plain), "--sessions", "10")
    run("-o", str(zipped), "--sessions", "10")
    first = zipped.read_bytes()
    run("-o", str(zipped), "--sessions", "10")
    run("-o", str(flagged), "--sessions", "10", "--gzip")
    assert gzip.decompress(first) == plain.read_bytes()
    assert zipped.read_bytes() == first == flagged.read_bytes()


def test_stdout_gets_records_and_stderr_the_summary() -> None:
    result = run("-o", "-", "--sessions", "2")
    assert result.exit_code == 0
    assert len(result.stdout.splitlines()) == 32
    assert result.stderr.strip() == "wrote 32 records (2 sessions) to stdout"


# --------------------------------------------------------------------------- planted effects


@pytest.fixture(scope="module")
def planted() -> tuple[dict[str, np.ndarray], dict]:
    """One large run with several effects planted at once, as columns."""
    config = SimulationConfig(
        sessions=2000,
        seed=3,
        end=parse_utc_datetime(END),
        reviewer_offsets={GPT: 0.8, GEMINI: -0.6},
        position_effects=[0.4, 0.1, 0.0, -0.4],
        self_preference=0.6,
        verbosity=0.5,
        drift={LLAMA: 1.5},
    )
    out = io.StringIO()
    truth = write_jsonl(config, out)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    start = datetime.fromisoformat(truth["start"])
    span = (datetime.fromisoformat(truth["end"]) - start).total_seconds()
    columns = {
        "score": np.array([r["score_value"] for r in records]),
        "reviewer": np.array([r["reviewer_id"] for r in records]),
        "model": np.array([r["model_id"] for r in records]),
        "position": np.array([r["position"] for r in records]),
        "length": np.array([r["response_length_chars"] for r in records]),
        "t": np.array([(datetime.fromisoformat(r["timestamp"]) - start).total_seconds() for r in records])
        / span,
    }
    return columns, truth


def test_planted_reviewer_offsets_are_recovered(planted) -> None:
    data, truth = planted
    mean = {r: data["score"][data["reviewer"] == r].mean() for r in truth["reviewers"]}
    # Compare with the unbiased reviewer that does not drift.
    assert mean[GPT] - mean[CLAUDE] == pytest.approx(0.8, abs=0.1)
    assert mean[GEMINI] - mean[CLAUDE] == pytest.approx(-0.6, abs=0.1)


def test_planted_position_effects_are_recovered(planted) -> None:
    data, truth = planted
    means = np.array([data["score"][data["position"] == p].mean() for p in range(4)])
    effects = np.array(truth["position_effects"])
    assert means - means.mean() == pytest.approx(effects - effects.mean(), abs=0.08)


def test_planted_self_preference_is_recovered(planted) -> None:
    data, truth = planted
    # Reviewer and model terms absorb offsets and each model's typical length, which a plain
    # self-vs-others gap would mix in.
    reviewers = [data["reviewer"] == r for r in truth["reviewers"]]
    models = [data["model"] == m for m in truth["models"][1:]]
    is_self = data["reviewer"] == data["model"]
    design = np.column_stack([*reviewers, *models, is_self]).astype(float)
    coefficients = np.linalg.lstsq(design, data["score"], rcond=None)[0]
    assert coefficients[-1] == pytest.approx(0.6, abs=0.1)


def test_planted_verbosity_is_recovered_per_sd_of_log_length(planted) -> None:
    data, truth = planted
    z = (np.log(data["length"]) - truth["log_length_mean"]) / truth["log_length_sd"]
    assert z.mean() == pytest.approx(0, abs=0.05) and z.std() == pytest.approx(1, abs=0.05)
    slope = np.polyfit(z, data["score"], 1)[0]
    assert slope == pytest.approx(0.5, abs=0.06)


def test_drift_shows_up_as_a_trend_for_that_reviewer_only(planted) -> None:
    data, _ = planted
    mine = {r: data["reviewer"] == r for r in (LLAMA, CLAUDE)}
    slope = {r: np.polyfit(data["t"][rows], data["score"][rows], 1)[0] for r, rows in mine.items()}
    assert slope[LLAMA] == pytest.approx(1.5, abs=0.2)
    assert slope[CLAUDE] == pytest.approx(0.0, abs=0.2)


def test_length_quality_correlation_confounds_length_without_verbosity(tmp_path: Path) -> None:
    quality = {GPT: 1.0, CLAUDE: 0.5, GEMINI: -0.5, LLAMA: -1.0}
    config = SimulationConfig(sessions=600, end=parse_utc_datetime(END), model_quality=quality,
                              length_quality_corr=0.9)
    out = io.StringIO()
    truth = write_jsonl(config, out)
    means = [truth["model_log_length_means"][m] for m in quality]
    assert np.corrcoef(means, list(quality.values()))[0, 1] == pytest.approx(0.9)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    score = np.array([r["score_value"] for r in records])
    log_length = np.log([r["response_length_chars"] for r in records])
    model = np.array([r["model_id"] for r in records])
    assert np.polyfit(log_length, score, 1)[0] > 0.3  # longer looks better...
    for m in quality:  # ...but within a model length does not matter
        assert abs(np.polyfit(log_length[model == m], score[model == m], 1)[0]) < 0.2


def test_anomalous_sessions_are_planted_at_the_rate_and_listed_in_truth(tmp_path: Path) -> None:
    records, truth = simulate(tmp_path, "--sessions", "400", "--anomalies", "0.1")
    planted = truth["anomalous_sessions"]
    assert 20 <= len(planted) <= 65
    assert {p["kind"] for p in planted.values()} == {"constant", "erratic"}
    sessions = by(records, "session_id")
    assert set(planted) <= {s for (s,) in sessions}
    for session_id, anomaly in planted.items():
        scores = {r["score_value"] for r in sessions[(session_id,)]}
        if anomaly["kind"] == "constant":
            assert scores == {anomaly["score"]} and anomaly["score"] in (1.0, 10.0)
        else:
            assert anomaly["reviewer"] in truth["reviewers"]
    normal = [s for (s,) in sessions if s not in planted]
    assert all(len({r["score_value"] for r in sessions[(s,)]}) > 1 for s in normal)


def test_unscored_records_carry_score_zero_at_the_rate(tmp_path: Path) -> None:
    records, _ = simulate(tmp_path, "--sessions", "200", "--unscored", "0.2")
    share = np.mean([r["score_value"] == 0.0 for r in records])
    assert share == pytest.approx(0.2, abs=0.04)


# --------------------------------------------------------------------------- bad values


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--quality", "gpt"], "expected NAME=NUMBER"),
        (["--quality", "nosuch=1"], "expected one of openai/gpt-4o"),
        (["--drift", f"{GPT}=fast"], "expected NAME=NUMBER"),
        (["--position-effect", "0.3,x"], "expected numbers separated by commas"),
        (["--position-effect", "1,2,3,4,5"], "at most one value per display slot"),
        (["--end", "yesterday"], "expected ISO 8601"),
        (["--candidates-per-session", "9"], "between 1 and 4"),
        (["--schema-version", "1.2"], "expected MAJOR.MINOR.PATCH"),
        (["--length-quality-corr", "0.5"], "needs model quality that differs"),
        (["--models", "a,a"], "must not repeat an id"),
        (["--days", "0"], "days must be a number > 0"),
        (["--sessions", "0"], "--sessions"),
    ],
)
def test_bad_values_exit_2_with_the_expected_form(tmp_path: Path, args: list[str], expected: str) -> None:
    result = run("-o", str(tmp_path / "out.jsonl"), *args)
    assert result.exit_code == 2
    assert expected in flat(result.output)
    assert "Traceback" not in result.output


def test_parse_mapping_reads_pairs_and_names_the_bad_item() -> None:
    assert parse_mapping("a/b=0.5, c=-1,") == {"a/b": 0.5, "c": -1.0}
    assert parse_mapping("") == {}
    for bad in ("a", "=1", "a=x", "a=nan"):
        with pytest.raises(ValueError, match=f"bad item '{bad}': expected NAME=NUMBER"):
            parse_mapping(bad)
    with pytest.raises(ValueError, match="given twice"):
        parse_mapping("a=1,a=2")


def test_parse_floats_reads_a_comma_list() -> None:
    assert parse_floats("0.3,0,-0.2") == [0.3, 0.0, -0.2]
    with pytest.raises(ValueError, match="bad number 'x'"):
        parse_floats("1,x")


def test_scoring_shares_make_reviewers_see_different_candidates() -> None:
    models = ["m/a", "m/b", "m/c"]
    config = SimulationConfig(sessions=400, seed=5, models=models, reviewers=["r/x", "r/y"],
                              scoring_share={"r/x": {"m/a": 0.0, "m/b": 0.25}})
    out = io.StringIO()
    truth = write_jsonl(config, out)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(records) == truth["records"]
    pairs = defaultdict(int)
    for r in records:
        pairs[r["reviewer_id"], r["model_id"]] += 1
    assert pairs["r/x", "m/a"] == 0 and pairs["r/y", "m/a"] == pairs["r/x", "m/c"] == pairs["r/y", "m/b"] == 400
    assert 0.2 < pairs["r/x", "m/b"] / 400 < 0.3
    assert truth["scoring_share"]["r/x"] == {"m/a": 0.0, "m/b": 0.25, "m/c": 1.0}


def test_scoring_shares_outside_0_1_or_for_unknown_ids_are_refused() -> None:
    with pytest.raises(SimulationConfigError, match="between 0 and 1"):
        SimulationConfig(models=["m/a"], scoring_share={"m/a": {"m/a": 1.5}})
    with pytest.raises(SimulationConfigError, match="unknown reviewer 'r/z'"):
        SimulationConfig(models=["m/a"], scoring_share={"r/z": {"m/a": 0.5}})
