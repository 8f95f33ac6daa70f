"""The report's counts say what they count: the first-shown-wins share is over judgments (and
says how many pairs they come from), and the headline length r's n_sessions counts only the
sessions that can contribute (at least two answers scored by other reviewers)."""

from __future__ import annotations

import json
from itertools import combinations

import pytest

from council_db.analysis.loading.score_data import from_records
from council_db.analysis.loading.window import Window, load_for_report
from council_db.report.builder import build
from council_db.report.render import text
from council_db.store.database import open_database
from tests.conftest import Cli, simulated, write_jsonl


@pytest.fixture(scope="module")
def lines() -> list[dict]:
    """40 sessions, orders shuffled per reviewer; in 12 of them only one candidate was scored."""
    records, _ = simulated(sessions=40, seed=21, per_reviewer_shuffle=True)
    thin = sorted({r["session_id"] for r in records})[:12]
    return [r for r in records if r["session_id"] not in thin or r["model_id"] == records[0]["model_id"]]


def sessions_with_two_answers(lines: list[dict]) -> int:
    answers: dict[str, set] = {}
    for r in lines:
        if r["reviewer_id"] != r["model_id"]:
            answers.setdefault(r["session_id"], set()).add((r["model_id"], r["response_length_chars"]))
    return sum(len(found) >= 2 for found in answers.values())


def first_shown_counts(lines: list[dict]) -> tuple[int, int]:
    """(judgments without a tie, pairs) over the pairs of answers one session showed in both orders."""
    seen: dict[tuple, list[tuple[bool, float]]] = {}
    by_reviewer: dict[tuple, list[dict]] = {}
    for r in lines:
        by_reviewer.setdefault((r["session_id"], r["reviewer_id"]), []).append(r)
    for (session, _), scored in by_reviewer.items():
        for a, b in combinations(sorted(scored, key=lambda r: r["position"]), 2):
            if a["model_id"] != b["model_id"]:
                pair = (session, *sorted((a["model_id"], b["model_id"])))
                seen.setdefault(pair, []).append((a["model_id"] < b["model_id"], a["score_value"] - b["score_value"]))
    both = [judged for judged in seen.values() if len({order for order, _ in judged}) == 2]
    return sum(margin != 0 for judged in both for _, margin in judged), len(both)


def test_first_shown_wins_is_a_share_of_judgments_and_says_how_many_pairs(lines):
    judgments, pairs = first_shown_counts(lines)
    assert judgments > pairs > 0
    report = build(from_records(lines), resamples=100)
    assert report.position.consistency.first_shown_wins.n_records == judgments
    assert f"of {judgments:,} judgments (ties left out) of {pairs:,} pairs seen in both orders" in text(report)


def test_the_headline_length_r_counts_only_sessions_with_two_answers_by_other_reviewers(lines, tmp_path):
    expected = sessions_with_two_answers(lines)
    assert expected == 28
    assert build(from_records(lines), resamples=100).length.headline.n_sessions == expected
    cli = Cli(tmp_path / "council.db")
    assert cli("import", str(write_jsonl(tmp_path / "in.jsonl", lines))).exit_code == 0
    db = open_database(f"sqlite:///{tmp_path / 'council.db'}", notify=lambda _: None)
    loaded = load_for_report(db, Window(), sample_sessions=20)
    assert loaded.totals is not None  # from whole-window sums
    report = build(loaded.data, totals=loaded.totals, window_sessions=loaded.window_sessions)
    assert report.length.headline.n_sessions == expected
    db.engine.dispose()


def test_a_window_with_sessions_without_usable_scores_is_not_called_a_sample(tmp_path):
    """Sessions whose every score is excluded (0 on a 1-10 scale: ranked but never scored) are
    in the window but not in the data; nothing was sampled, and the report must not say so."""
    records, _ = simulated(sessions=30, seed=4)
    unscored = [dict(r, session_id=f"unscored-{r['session_id']}", score_value=0)
                for r in records if r["session_id"] in {records[0]["session_id"], records[-1]["session_id"]}]
    cli = Cli(f"sqlite:///{tmp_path / 'council.db'}")
    assert cli("import", str(write_jsonl(tmp_path / "in.jsonl", records + unscored))).exit_code == 0

    report = json.loads(cli("bias-report", "--format", "json").stdout)

    assert report["window"]["sample"] is None
    assert not [w for w in report["warnings"] if "sample" in w], report["warnings"]
