"""council-db diff: a simulated judge upgrade (a step in one reviewer's severity, or in its slot
preference, at a known time) found by diff at the planted size and by check on the window after
it; two reviewers and two config versions on the same items; no change where none was planted;
every format, exit 0 / 1 (--fail-on-change) / 2."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import numpy as np
import pytest

from council_db.errors import UsageError
from council_db.simulate import SimulationConfig
from tests.conftest import Cli, both_backends, run_module, simulated, write_jsonl

SESSIONS = 300
GPT, CLAUDE = SimulationConfig().models[:2]
REVIEWERS = len(SimulationConfig().models)
END = datetime(2026, 10, 1, tzinfo=timezone.utc)
STEP = 1.2  # planted at the middle of the span (drift_at 0.5)


def _store(tmp_path_factory, name: str, **config) -> tuple[Cli, str]:
    """A store of simulated sessions, and the time halfway through them."""
    tmp = tmp_path_factory.mktemp(name)
    records, _ = simulated(sessions=SESSIONS, end=END, days=100, **config)
    cli = Cli(tmp / f"{name}.db")
    assert cli("import", str(write_jsonl(tmp / "records.jsonl", records))).exit_code == 0
    times = sorted(r["timestamp"] for r in records)
    first, last = (datetime.fromisoformat(t) for t in (times[0], times[-1]))
    return cli, (first + (last - first) / 2).isoformat()


@pytest.fixture(scope="module")
def severity_step(tmp_path_factory):
    return _store(tmp_path_factory, "severity", seed=40, drift={GPT: STEP}, drift_at=0.5)


@pytest.fixture(scope="module")
def slot_step(tmp_path_factory):
    return _store(tmp_path_factory, "slots", seed=22, position_drift={GPT: [STEP]}, drift_at=0.5, noise_sd=0.7)


@pytest.fixture(scope="module")
def steady(tmp_path_factory):
    """No change in time; GPT a steady 0.6 points harsher than the others."""
    return _store(tmp_path_factory, "steady", seed=23, reviewer_offsets={GPT: -0.6})


def _figures(cli: Cli, *args: str) -> dict:
    result = cli("diff", *args, "--json")
    assert result.exit_code == 0, result.output
    return {figure["figure"]: figure for figure in json.loads(result.stdout)["figures"]}


def test_a_step_in_one_reviewers_severity_is_found_at_its_planted_size(severity_step):
    cli, middle = severity_step
    figures = _figures(cli, "--changed-at", middle)

    moved = figures[f"severity {GPT}"]
    planted = STEP * (REVIEWERS - 1) / REVIEWERS  # severity is relative to the average reviewer
    assert moved["ci_low"] <= planted <= moved["ci_high"] and moved["changed"] and moved["q_value"] <= 0.05
    assert moved["before"]["n_sessions"] + moved["after"]["n_sessions"] == SESSIONS
    assert not any(f["changed"] for name, f in figures.items() if "slot" in name or "quality" in name)


def test_check_on_the_window_after_the_step_fails_severity_max_for_that_reviewer_only(severity_step):
    cli, middle = severity_step
    result = cli("check", "--since", middle, "--severity-max", "0.3", "--json")

    assert result.exit_code == 1, result.output
    failed = [r["subject"] for r in json.loads(result.stdout)["results"] if r["status"] == "fail"]
    assert failed == [GPT]


def test_a_step_in_one_reviewers_slot_preference_is_found_at_its_planted_size(slot_step):
    cli, middle = slot_step
    figures = _figures(cli, "--changed-at", middle)

    first_slot = figures[f"slot 0 effect {GPT}"]
    planted = STEP * (REVIEWERS - 1) / REVIEWERS  # slot effects are relative to the reviewer's average slot
    assert first_slot["ci_low"] <= planted <= first_slot["ci_high"] and first_slot["changed"]
    others = [f for name, f in figures.items() if name.startswith("slot 0 effect ") and GPT not in name]
    assert others and not any(f["changed"] for f in others)


def test_check_on_the_window_after_the_step_flags_that_reviewers_position_bias(slot_step):
    cli, middle = slot_step
    after = cli("check", "--since", middle, "--no-flags", "--flag-kind", "position", "--flag-reviewer", GPT)
    other = cli("check", "--since", middle, "--no-flags", "--flag-kind", "position", "--flag-reviewer", CLAUDE)

    assert after.exit_code == 1 and f"position bias of reviewer {GPT}" in after.stdout
    assert other.exit_code == 0, other.output


def test_without_a_change_nothing_changed_and_fail_on_change_exits_0(steady):
    cli, middle = steady
    result = cli("diff", "--changed-at", middle, "--fail-on-change")

    assert result.exit_code == 0, result.output
    assert "CHANGED" not in result.stdout and result.stdout.rstrip().endswith("no figure at q <= 0.05)")


def test_fail_on_change_exits_1_when_a_figure_changed(severity_step):
    cli, middle = severity_step
    result = cli("diff", "--changed-at", middle, "--fail-on-change")

    assert result.exit_code == 1 and f"severity {GPT}" in result.stdout


def test_two_reviewers_on_the_same_answers_show_their_planted_difference(steady):
    cli, _ = steady
    result = cli("diff", "--reviewer", GPT, "--against", CLAUDE, "--json")

    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    difference = found["mean_difference"]
    assert difference["ci_low"] <= 0.6 <= difference["ci_high"] and difference["q_value"] <= 0.05
    assert found["items"] == SESSIONS * REVIEWERS and found["clusters"] == SESSIONS and found["changed"]
    assert {c["candidate"] for c in found["candidates"]} == set(SimulationConfig().models)
    assert 0 < found["flip_rate"]["estimate"] < 1 and found["window"]["sessions"] == SESSIONS


def test_text_and_markdown_state_the_window_n_and_each_ci(steady):
    cli, _ = steady
    text = cli("diff", "--reviewer", GPT, "--against", CLAUDE)
    markdown = cli("diff", "--reviewer", GPT, "--against", CLAUDE, "--format", "markdown")

    assert text.exit_code == 0 and markdown.exit_code == 0
    assert f"items both scored: {SESSIONS * REVIEWERS:,} in {SESSIONS} clusters" in text.stdout
    assert "window asked: every session, no time bound" in text.stdout
    assert "mean difference (points)" in text.stdout and "[+0." in text.stdout
    assert markdown.stdout.startswith("## council-db diff") and "| candidate | difference [95% CI] |" in markdown.stdout


def test_o_writes_the_format_its_suffix_names(steady, tmp_path):
    cli, _ = steady
    result = cli("diff", "--reviewer", GPT, "--against", CLAUDE, "-o", str(tmp_path / "diff.md"))

    assert result.exit_code == 0, result.output
    assert (tmp_path / "diff.md").read_text().startswith("## council-db diff")


def _config_lines(shift: float) -> list[dict]:
    """The same 120 queries (query_hash) answered under two config versions, the second's judges
    ``shift`` points more generous."""
    lines = []
    for version, seed, offset in (("1.0", 31, 0.0), ("2.0", 32, shift)):
        records, _ = simulated(sessions=120, end=END, seed=seed, council_config_version=version,
                               reviewer_offsets={r: offset for r in SimulationConfig().models})
        order = {key: i for i, key in enumerate(dict.fromkeys(r["session_id"] for r in records))}
        lines += [{**r, "query_hash": f"{order[r['session_id']]:016x}"} for r in records]
    return lines


def _paired_mean(lines: list[dict]) -> float:
    """The mean over (query, candidate) of version 2.0's mean score minus version 1.0's."""
    by: dict[tuple[str, str, str], list[float]] = {}
    for line in lines:
        by.setdefault((line["query_hash"], line["model_id"], line["council_config_version"]), []).append(
            line["score_value"])
    items = {(q, m) for q, m, _ in by}
    return float(np.mean([np.mean(by[(q, m, "2.0")]) - np.mean(by[(q, m, "1.0")]) for q, m in items]))


@both_backends
def test_two_config_versions_on_the_same_queries_show_their_planted_difference(cli, tmp_path):
    lines = _config_lines(0.8)
    assert cli("import", str(write_jsonl(tmp_path / "configs.jsonl", lines))).exit_code == 0

    result = cli("diff", "--config-version", "1.0", "--against-config", "2.0", "--json")

    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert found["mean_difference"]["estimate"] == pytest.approx(_paired_mean(lines))
    assert found["mean_difference"]["ci_low"] <= 0.8 <= found["mean_difference"]["ci_high"]
    assert found["clusters"] == 120 and found["items"] == 480 and found["first"] == "config 1.0"


def _refused(result) -> str:
    """The usage error's one line: raised in-process (the entry point prints it and exits 2), or
    already printed by the option parser with exit 2."""
    if isinstance(result.exception, UsageError):
        assert result.exception.exit_code == 2
        return str(result.exception)
    assert result.exit_code == 2, result.output
    return result.output


@pytest.mark.parametrize("args, says", [
    ((), "diff needs one way to name its two sides (0 given)"),
    (("--against", CLAUDE, "--changed-at", "2026-08-01"), "(2 given)"),
    (("--against", CLAUDE), "give --reviewer exactly once (got 0)"),
    (("--reviewer", GPT, "--reviewer", CLAUDE, "--against", CLAUDE), "give --reviewer exactly once (got 2)"),
    (("--reviewer", GPT, "--against", GPT), "name two different reviewers"),
    (("--reviewer", GPT, "--against", "nobody"), "--against nobody: no score by this reviewer"),
    (("--config-version", "0.1.0", "--against-config", "9.9"), "--against-config 9.9: no session"),
    (("--changed-at", "yesterday"), "--changed-at"),
    (("--changed-at", "2030-01-01"), "no session after --changed-at"),
    (("--changed-at", "2026-08-01", "--sessions", "10"), "--sessions cannot split"),
    (("--changed-at", "2026-08-01", "--since", "2026-09-01"), "is not after --since"),
    (("--reviewer", GPT, "--against", CLAUDE, "--format", "html"), "--format"),
])
def test_usage_and_data_errors_exit_2_naming_the_option(steady, args, says):
    cli, _ = steady

    assert says in _refused(cli("diff", *args))


def test_a_usage_error_is_one_line_on_stderr_with_exit_2_never_a_traceback(steady):
    cli, _ = steady
    result = run_module("--db", cli.db, "diff", "--reviewer", GPT, "--against", "nobody")

    assert result.returncode == 2 and result.stdout == b""
    assert result.stderr.decode().count("\n") == 1 and "--against nobody" in result.stderr.decode()


def test_reviewers_who_never_scored_the_same_answer_are_told_why_with_exit_2(tmp_path):
    records, _ = simulated(sessions=20, end=END, seed=5)
    keys = sorted({r["session_id"] for r in records})
    early, late = set(keys[:10]), set(keys[10:])
    kept = [r for r in records if r["reviewer_id"] not in (GPT, CLAUDE)
            or (r["reviewer_id"] == GPT and r["session_id"] in early)
            or (r["reviewer_id"] == CLAUDE and r["session_id"] in late)]
    cli = Cli(tmp_path / "apart.db")
    assert cli("import", str(write_jsonl(tmp_path / "apart.jsonl", kept))).exit_code == 0

    says = _refused(cli("diff", "--reviewer", GPT, "--against", CLAUDE))

    assert "no shared items" in says and "scored no answer of the same session" in says
    assert "40 items only the first side scored, 40 only the second" in says


def _fastchat_lines(run: str, judge: str, answers: dict) -> list[dict]:
    """One FastChat review run as llm-council records, a session per question and answer pair:
    `import --from fastchat-review` keys a session by its review id, which no other run shares."""
    from tests.realdata import fastchat_reviews

    lines = []
    for review in fastchat_reviews(run):
        key = f"vicuna80/q{review['question_id']}/{review['answer1_id']}/{review['answer2_id']}"
        for position, (answer, score) in enumerate(zip((review["answer1_id"], review["answer2_id"]), review["score"])):
            lines.append({"schema_version": "1.2.0", "session_id": key, "timestamp": "2023-03-22T00:00:00Z",
                          "consent_level": 1, "reviewer_id": judge, "model_id": answers[answer]["model_id"],
                          "position": position, "response_length_chars": len(answers[answer]["text"]),
                          "score_value": score, "score_scale": "1-10"})
    return lines


def test_gpt4_and_gpt35_reviewing_the_same_vicuna80_answers_give_the_figures_the_file_holds(tmp_path):
    """FastChat's Vicuna-80 reviews: GPT-4 and GPT-3.5-turbo judged the same answer pairs. The
    paired difference and flip rate are derived here from the reviews themselves."""
    from tests.realdata import fastchat_answers

    answers = fastchat_answers()
    lines = (_fastchat_lines("vicuna-13b-20230322-new-hp-fp16", "gpt-4", answers)
             + _fastchat_lines("gpt-3.5-turbo_review_vicuna-13b-20230322-new-hp-fp16", "gpt-3.5-turbo", answers))
    scores: dict[tuple[str, str], dict[str, float]] = {}
    for line in lines:
        if 1 <= line["score_value"] <= 10:  # 0 and -1: no score (left out, as the import does)
            scores.setdefault((line["session_id"], line["model_id"]), {})[line["reviewer_id"]] = line["score_value"]
    shared = {item: by for item, by in scores.items() if len(by) == 2}
    differences = [by["gpt-3.5-turbo"] - by["gpt-4"] for by in shared.values()]
    sessions: dict[str, list[dict[str, float]]] = {}
    for (session, _), by in shared.items():
        sessions.setdefault(session, []).append(by)
    flips = sum((by["gpt-4"] == max(o["gpt-4"] for o in items)) != (by["gpt-3.5-turbo"] == max(o["gpt-3.5-turbo"]
                                                                                             for o in items))
                for items in sessions.values() for by in items)
    cli = Cli(tmp_path / "vicuna80.db")
    assert cli("import", str(write_jsonl(tmp_path / "reviews.jsonl", lines))).exit_code == 0

    result = cli("diff", "--reviewer", "gpt-4", "--against", "gpt-3.5-turbo", "--json")

    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    # 320 pairs judged by both: GPT-3.5 scored one pair -1 -1 (no score), GPT-4 one answer 0
    assert found["items"] == len(shared) == 637 and found["clusters"] == len(sessions) == 319
    assert found["mean_difference"]["estimate"] == pytest.approx(sum(differences) / len(differences))
    assert found["flip_rate"]["estimate"] == pytest.approx(flips / len(shared))
    for name in ("mean_difference", "flip_rate", "kappa", "weighted_kappa"):
        figure = found[name]
        assert figure["ci_low"] < figure["estimate"] < figure["ci_high"] and figure["n_sessions"] == 319


def test_text_fits_a_terminals_width_and_keeps_a_figure_a_line_in_a_file(severity_step, monkeypatch, tmp_path):
    cli, middle = severity_step
    written = cli("diff", "--changed-at", middle, "-o", str(tmp_path / "diff.txt"))
    monkeypatch.setenv("COLUMNS", "80")
    printed = cli("diff", "--changed-at", middle)

    assert printed.exit_code == 0 and written.exit_code == 0
    assert max(len(line) for line in printed.stdout.splitlines()) <= 80
    assert f"  severity {GPT}\n    before " in printed.stdout
    row = next(line for line in (tmp_path / "diff.txt").read_text().splitlines() if f"severity {GPT} " in line)
    assert row.rstrip().endswith("CHANGED") and "[" in row


def test_the_windows_diff_reads_no_config_versions_and_its_figures_stay_the_reports(steady, monkeypatch):
    """The diff shows figures, not the report's warnings about mixed config versions: it does
    not look the versions up (0.2 s a window at a million sessions), and each window's figures
    are still the ones `bias-report` gives for it."""
    cli, middle = steady
    report = json.loads(cli("bias-report", "--until", middle, "--json").stdout)
    from council_db.analysis.drift import version_drift

    def looked_up(*_):
        raise AssertionError("diff --changed-at looked up the config versions")

    monkeypatch.setattr(version_drift, "load_config_versions", looked_up)
    figures = _figures(cli, "--changed-at", middle)

    for reviewer in report["reviewers"]:
        severity = reviewer["severity"]
        before = figures[f"severity {reviewer['reviewer_id']}"]["before"]
        assert (before["estimate"], before["ci_low"], before["ci_high"]) == (
            severity["estimate"], severity["ci_low"], severity["ci_high"])
    agreement, alpha = figures["agreement (Krippendorff's alpha)"]["before"], report["agreement"]
    assert (agreement["ci_low"], agreement["ci_high"]) == (alpha["ci_low"], alpha["ci_high"])
