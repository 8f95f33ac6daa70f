"""The calibrated view: ADR 0017's aggregation strategies, `council-db scores` and
`council-db leaderboard`, and the proof that calibration recovers a planted ranking when
reviewers see different candidates."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import kendalltau

from council_db.analysis.aggregation import Calibration, Method, calibrate, consensus, leaderboard
from council_db.analysis.loading.score_data import from_records, from_rows
from council_db.errors import CouncilDbError
from council_db.simulate import SimulationConfig, write_jsonl
from tests.conftest import Cli, run_module
from tests.conftest import write_jsonl as write_lines

# One session, three reviewers (r0 harsh, r2 generous), two candidates; r1 also reviews itself.
ROWS = [
    ("s1", 1, "r0", "m/a", 0, 1000, 4.0), ("s1", 1, "r1", "m/a", 1, 1000, 6.0), ("s1", 1, "r2", "m/a", 0, 1000, 9.0),
    ("s1", 1, "r0", "m/b", 1, 2000, 3.0), ("s1", 1, "r1", "m/b", 0, 2000, 5.0), ("s1", 1, "r2", "m/b", 1, 2000, 7.0),
    ("s1", 1, "r1", "r1", 2, 500, 10.0),
]


def _consensus(method: Method, **calibration) -> dict[str, float]:
    data = from_rows(ROWS)
    result = consensus(data, method, Calibration(**calibration))
    return {result.models[m]: round(float(s), 6) for m, s in zip(result.model, result.score)}


def test_each_method_combines_one_answers_scores_as_adr_0017_defines():
    assert _consensus(Method.mean) == {"m/a": round(19 / 3, 6), "m/b": 5.0}
    assert _consensus(Method.median) == {"m/a": 6.0, "m/b": 5.0}
    assert _consensus(Method.weighted, weights={"r2": 2.0, "r0": 0.0}) == {"m/a": 8.0, "m/b": round(19 / 3, 6)}
    offsets = {"r0": -2.0, "r1": 0.0, "r2": 2.0}
    assert _consensus(Method.bias_adjusted, offsets=offsets) == {"m/a": round(19 / 3, 6), "m/b": 5.0}
    normalized = _consensus(Method.normalized, means={"r0": 4.0, "r1": 6.0, "r2": 8.0},
                            sds={"r0": 1.0, "r1": 1.0, "r2": 2.0})
    # z-scores (0, 0, 0.5) and (-1, -1, -0.5), put back on the average reviewer's scale (6 + z * 4/3)
    assert normalized == pytest.approx({"m/a": 6 + 4 / 3 / 6, "m/b": 6 - 4 / 3 * 2.5 / 3})


def test_self_reviews_are_left_out_unless_kept():
    data = from_rows(ROWS)
    assert "r1" not in [data.models[m] for m in consensus(data, Method.mean, Calibration()).model]
    kept = consensus(data, Method.mean, Calibration(), include_self=True)
    assert {kept.models[m]: int(n) for m, n in zip(kept.model, kept.n_reviewers)}["r1"] == 1


def test_a_reviewer_without_an_offset_is_named_with_the_fix():
    with pytest.raises(CouncilDbError, match="r2.*--offsets"):
        _consensus(Method.bias_adjusted, offsets={"r0": -2.0, "r1": 0.0})


# --------------------------------------------------------------------------- the proof

MODELS = ["m/a", "m/b", "m/c", "m/d", "m/e", "m/f"]  # best first
REVIEWERS = ["r/harsh", "r/generous", "r/fair-1", "r/fair-2"]


def unbalanced(seed: int, sessions: int = 150) -> SimulationConfig:
    """Harsh reviewer scores mostly the strong models, generous one mostly the weak ones."""
    share = {"r/harsh": {m: 1.0 if i < 3 else 0.15 for i, m in enumerate(MODELS)},
             "r/generous": {m: 0.15 if i < 3 else 1.0 for i, m in enumerate(MODELS)}}
    return SimulationConfig(sessions=sessions, seed=seed, models=MODELS, reviewers=REVIEWERS,
                            candidates_per_session=4, model_quality=dict(zip(MODELS, [0.9, 0.6, 0.3, 0.0, -0.3, -0.6])),
                            reviewer_offsets={"r/harsh": -1.5, "r/generous": 1.5}, scoring_share=share)


def ranking_tau(config: SimulationConfig, method: Method) -> tuple[float, list]:
    out = io.StringIO()
    write_jsonl(config, out)
    data = from_records(json.loads(line) for line in out.getvalue().splitlines())
    calibration = calibrate(method, data, weights={}, offsets={}, include_self=False)
    standings = leaderboard(consensus(data, method, calibration), n_boot=300, seed=config.seed)
    planted = [MODELS.index(s.model) for s in standings]
    return float(kendalltau(planted, range(len(planted))).statistic), standings


def test_calibrated_leaderboards_recover_the_planted_ranking_better_than_the_mean_when_reviewers_see_different_models():
    seeds = range(5)
    tau = {method: np.mean([ranking_tau(unbalanced(seed), method)[0] for seed in seeds])
           for method in (Method.mean, Method.bias_adjusted, Method.normalized)}
    assert tau[Method.mean] < 0.75  # harsh reviewers on strong models compress and reorder the plain mean
    assert tau[Method.bias_adjusted] >= 0.9 and tau[Method.bias_adjusted] > tau[Method.mean] + 0.2
    assert tau[Method.normalized] >= 0.9 and tau[Method.normalized] > tau[Method.mean] + 0.2


def test_bias_adjusted_rank_intervals_hold_each_models_planted_rank():
    _, standings = ranking_tau(unbalanced(seed=11, sessions=300), Method.bias_adjusted)
    for standing in standings:
        planted_rank = MODELS.index(standing.model) + 1
        assert standing.rank_low <= planted_rank <= standing.rank_high, standing
        assert standing.score.ci_low < standing.score.estimate < standing.score.ci_high


# --------------------------------------------------------------------------- the commands

NOT_SCORES = (Method.quality, Method.ppi, Method.bradley_terry)  # leaderboard-only methods
CONSENSUS = [method for method in Method if method not in NOT_SCORES]


@pytest.fixture(scope="module")
def simulated(tmp_path_factory) -> tuple[Path, str]:
    """A database of 60 unbalanced sessions, and one session id in it."""
    folder = tmp_path_factory.mktemp("calibrated")
    source = folder / "council.jsonl"
    with source.open("w") as out:
        write_jsonl(unbalanced(seed=3, sessions=60), out)
    db_path = folder / "council.db"
    assert Cli(db_path)("import", "-q", str(source)).exit_code == 0
    session_id = json.loads(source.read_text().splitlines()[0])["session_id"]
    return db_path, session_id


def test_scores_gives_each_candidates_consensus_in_every_format(simulated):
    db_path, session_id = simulated
    cli = Cli(db_path)
    for method in CONSENSUS:
        result = cli("scores", "--session", session_id, "--method", method.value, "--format", "json")
        assert result.exit_code == 0, result.output
        view = json.loads(result.stdout)
        assert view["method"] == method.value and view["session_id"] == session_id
        assert len(view["candidates"]) == 4 and all(c["reviewers"] >= 1 for c in view["candidates"])
    adjusted = json.loads(cli("scores", "--session", session_id, "--method", "bias-adjusted", "--format",
                              "json").stdout)
    assert adjusted["calibration"]["sessions"] == 60 and set(adjusted["calibration"]["offsets"]) == set(REVIEWERS)
    table = cli("scores", "--session", session_id, "--method", "median")
    assert table.exit_code == 0 and "reviewers" in table.stdout and session_id[:8] in table.stdout  # a short id
    assert session_id in cli("scores", "--session", session_id[:8], "--method", "median", "--wide").stdout
    csv_lines = cli("scores", "--session", session_id, "--format", "csv").stdout.splitlines()
    assert csv_lines[0] == "rank,model,response_length_chars,score,reviewers,session_id,method"
    assert len(csv_lines) == 5


def test_leaderboard_ranks_models_with_cis_sample_sizes_and_the_window_in_every_format(simulated):
    db_path, _ = simulated
    cli = Cli(db_path)
    board = json.loads(cli("leaderboard", "--method", "bias-adjusted", "--format", "json").stdout)
    assert board["window"]["sessions"] == 60 and board["window"]["start"] and board["confidence"] == "high"
    assert [m["rank"] for m in board["models"]] == list(range(1, 7))
    for entry in board["models"]:
        score = entry["score"]
        assert score["ci_low"] < score["estimate"] < score["ci_high"]
        assert score["n_sessions"] == entry["sessions"] > 0 and entry["records"] >= entry["answers"]
        assert 1 <= entry["rank_ci_low"] <= entry["rank"] <= entry["rank_ci_high"] <= 6
    latest = json.loads(cli("leaderboard", "--sessions", "20", "--format", "json").stdout)
    assert latest["window"]["sessions"] == 20 and latest["window"]["filters"] == {"sessions": 20}
    csv_lines = cli("leaderboard", "--method", "normalized", "--format", "csv").stdout.splitlines()
    assert csv_lines[0].startswith("rank,model,score,ci_low,ci_high,rank_ci_low,rank_ci_high,sessions")
    assert csv_lines[1].endswith(",60") and ",normalized," in csv_lines[1]
    table = cli("leaderboard", "--method", "weighted", "--weights", "r/harsh=0.5")
    assert table.exit_code == 0 and "60 sessions" in table.stdout and "95% CI" in table.stdout
    assert "given weights" in table.stderr


def test_the_same_seed_gives_the_same_intervals(simulated):
    cli = Cli(simulated[0])
    runs = [cli("leaderboard", "--method", "mean", "--seed", "7", "--format", "csv").stdout for _ in range(2)]
    assert runs[0] == runs[1] != cli("leaderboard", "--method", "mean", "--seed", "8", "--format", "csv").stdout


def test_stored_scores_are_never_changed_by_any_method(simulated, tmp_path):
    import sqlite3

    db_path, session_id = simulated
    config = tmp_path / "calibration.toml"
    config.write_text('[offsets]\n"r/harsh" = -1.0\n')

    def stored() -> list[tuple]:
        with sqlite3.connect(db_path) as connection:
            return connection.execute("SELECT * FROM scores ORDER BY 1, 2, 3, 4").fetchall()

    before = stored()
    cli = Cli(db_path)
    for method in (m for m in Method if m is not Method.ppi):  # ppi needs people's scores: test_leaderboard_ppi
        for args in ((), ("--include-self",), ("--config", str(config))):
            if method in CONSENSUS:
                assert cli("scores", "--session", session_id, "--method", method.value, *args).exit_code == 0
            assert cli("leaderboard", "--method", method.value, *args).exit_code == 0
    assert stored() == before and len(before) > 0


def test_given_offsets_are_subtracted_and_the_command_line_wins_over_the_config_file(simulated, tmp_path):
    db_path, session_id = simulated
    cli = Cli(db_path)

    def scores(*args: str) -> dict[str, float]:
        result = cli("scores", "--session", session_id, "--format", "json", *args)
        assert result.exit_code == 0, result.output
        return {c["model"]: c["score"] for c in json.loads(result.stdout)["candidates"]}

    plain = scores()
    everyone = ",".join(f"{r}=1" for r in REVIEWERS)
    shifted = scores("--method", "bias-adjusted", "--offsets", everyone)
    assert shifted == pytest.approx({m: s - 1 for m, s in plain.items()})
    as_json = tmp_path / "calibration.json"
    as_json.write_text(json.dumps({"offsets": {r: 1 for r in REVIEWERS}}))
    assert scores("--method", "bias-adjusted", "--config", str(as_json)) == pytest.approx(shifted)
    overridden = scores("--method", "bias-adjusted", "--config", str(as_json), "--offsets", ",".join(
        f"{r}=0" for r in REVIEWERS))
    assert overridden == pytest.approx(plain)


# --------------------------------------------------------------------------- errors


def user_sees(db_path: Path, *args: str) -> tuple[int, str]:
    """Exit status and stderr of council-db run as a user runs it (a real process)."""
    result = run_module("--db", str(db_path), *args)
    return result.returncode, result.stderr.decode()


@pytest.mark.parametrize("args, expected", [
    (("scores", "--session", "no-such-session"), "unknown session 'no-such-session': see council-db sessions"),
    (("leaderboard", "--method", "weighted", "--weights", "r/harsh=2,r/harhs=1"),
     "--weights: unknown reviewer 'r/harhs'; did you mean r/harsh?"),
    (("leaderboard", "--method", "weighted", "--weights", "r/harsh"),
     "--weights: bad item 'r/harsh': expected REVIEWER=NUMBER pairs"),
    (("leaderboard", "--method", "bias-adjusted", "--offsets", "r/harsh=-1,r/fair-1=x"),
     "--offsets: bad item 'r/fair-1=x'"),
    (("leaderboard", "--method", "weighted", "--weights", "r/harsh=-1"), "weights must be >= 0"),
    (("leaderboard", "--since", "yesterday"), "give e.g. 2025-12-17"),
])
def test_bad_input_is_named_with_its_fix(simulated, args, expected):
    status, stderr = user_sees(simulated[0], *args)
    assert status in (1, 2) and expected in stderr and "Traceback" not in stderr


def test_offsets_or_scales_from_too_few_sessions_are_refused_with_the_fix(simulated):
    for method in ("bias-adjusted", "normalized"):
        status, stderr = user_sees(simulated[0], "leaderboard", "--method", method, "--sessions", "5")
        assert status == 1 and "need at least 10 sessions" in stderr and "has 5 session(s)" in stderr
        assert ("--offsets" in stderr) == (method == "bias-adjusted")
    status, stderr = user_sees(simulated[0], "leaderboard", "--method", "bias-adjusted", "--sessions", "5",
                               "--offsets", "r/harsh=-1.5")
    assert status == 0 and "fewer than 10" in stderr


@pytest.mark.parametrize("name, text, expected", [
    ("bad.json", '{"weights": {"r/harsh": 2}', "not valid JSON"),
    ("bad.toml", "[weights\n", "not valid TOML"),
    ("keys.json", '{"aggregation_method": "median"}', "unknown key(s) aggregation_method"),
    ("values.toml", '[weights]\n"r/harsh" = "heavy"\n', "bad entry: r/harsh"),
])
def test_a_bad_config_file_is_named_with_what_it_should_hold(simulated, tmp_path, name, text, expected):
    path = tmp_path / name
    path.write_text(text)
    status, stderr = user_sees(simulated[0], "leaderboard", "--method", "weighted", "--config", str(path))
    assert status == 2 and f"--config: {path}" in stderr and expected in stderr


def test_a_session_with_only_unusable_scores_says_so(cli, db_path, tmp_path):
    from tests.conftest import session

    source = write_lines(tmp_path / "zero.jsonl", session("zero", score_value=0.0))
    assert cli("import", "-q", str(source)).exit_code == 0
    status, stderr = user_sees(db_path, "scores", "--session", "zero")
    assert status == 1 and "session 'zero' has no usable scores" in stderr
