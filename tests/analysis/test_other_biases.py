"""ADR-015's other biases on joint-model residuals: a planted favourite pair is the one
flagged, planted anchoring is found, and test-retest agreement is measured where an answer
was scored twice (and said to be not measurable where none was)."""

from __future__ import annotations

import numpy as np
import pytest

from council_db.analysis.loading.score_data import from_records
from council_db.report.builder import build
from tests.conftest import simulated

FAN, FAVOURITE = "openai/gpt-4o", "google/gemini-1.5-pro"


def records(sessions: int, seed: int, **config) -> list[dict]:
    return simulated(sessions=sessions, seed=seed, **config)[0]


def clip(score: float) -> float:
    return round(min(10.0, max(1.0, score)), 1)


def test_a_reviewer_that_favours_one_candidate_is_the_affinity_flagged():
    lines = records(300, 41)
    for line in lines:
        if line["reviewer_id"] == FAN and line["model_id"] == FAVOURITE:
            line["score_value"] = clip(line["score_value"] + 1.0)
    report = build(from_records(lines), resamples=100)
    cells = {(c.reviewer_id, c.model_id): c.residual_mean for c in report.affinity}
    assert len(cells) == 12  # 4 x 4 pairs without the self pairs
    planted = cells[(FAN, FAVOURITE)]
    assert planted.ci_low > 0 and planted.estimate == max(c.estimate for c in cells.values())
    affinity_flags = [f for f in report.flags if f.kind == "affinity"]
    assert affinity_flags[0].subject == f"{FAN} -> {FAVOURITE}"


def test_planted_anchoring_on_the_first_shown_answer_is_found():
    lines = records(300, 42)
    by_reviewer: dict[tuple[str, str], list[dict]] = {}
    for line in lines:
        by_reviewer.setdefault((line["session_id"], line["reviewer_id"]), []).append(line)
    for group in by_reviewer.values():
        first = min(group, key=lambda line: line["position"])
        for line in group:
            if line is not first:
                line["score_value"] = clip(line["score_value"] + 0.5 * (first["score_value"] - 6.5))
    report = build(from_records(lines), resamples=100)
    pooled = next(a.effect for a in report.anchoring if a.reviewer_id is None)
    # Positive (assimilation) and below the planted 0.5 per raw point: the effect is measured on
    # residuals, and the session effect absorbs the part every reviewer of the session shares.
    assert pooled.ci_low > 0.1 and 0.15 <= pooled.estimate <= 0.5
    assert {f.subject for f in report.flags if f.kind == "anchoring"} == {
        "anthropic/claude-3-5-sonnet", "google/gemini-1.5-pro", "meta-llama/llama-3.1-70b", "openai/gpt-4o"}


def test_clean_data_shows_no_affinity_or_anchoring_flag_and_retest_is_not_measurable():
    report = build(from_records(records(300, 43)), resamples=100)
    assert not [f for f in report.flags if f.kind in ("affinity", "anchoring")]
    assert report.self_consistency.measurable is False
    assert report.self_consistency.note.startswith("not measurable")


def test_an_answer_scored_twice_gives_each_reviewer_a_test_retest_difference():
    lines = records(200, 44)
    rng = np.random.default_rng(0)
    repeats = []
    for line in lines:
        if line["model_id"] == FAVOURITE:
            again = dict(line, position=line["position"] + 10,
                         score_value=clip(line["score_value"] + rng.normal(0, 0.5)))
            repeats.append(again)
    report = build(from_records(lines + repeats), resamples=100)
    consistency = report.self_consistency
    assert consistency.measurable and len(consistency.reviewers) == 4
    for reviewer in consistency.reviewers:
        assert reviewer.pairs == 200
        assert 0.3 <= reviewer.mean_abs_difference.estimate <= 0.5  # E|N(0, 0.5)| = 0.40


@pytest.mark.parametrize(("reviewers", "models", "contrasts"), [(2, 4, 4), (3, 2, 3), (2, 2, 1)])
def test_mirror_image_affinities_enter_the_family_once(reviewers, models, contrasts):
    """Residuals sum to zero over each candidate's and each reviewer's scores: with two
    reviewers of a candidate (or two candidates of a reviewer) the two pairs are one contrast."""
    lines = records(120, 44, reviewers=[f"judge/{i}" for i in range(reviewers)],
                    models=[f"vendor/model-{i}" for i in range(models)])
    report = build(from_records(lines), resamples=100)
    assert len(report.affinity) == reviewers * models
    tested = [c for c in report.affinity if c.mirror_of is None]
    assert len(tested) == contrasts
    totals = {f"{c.reviewer_id} -> {c.model_id}": c.residual_mean.estimate * c.residual_mean.n_records
              for c in report.affinity}
    for cell in report.affinity:
        if cell.mirror_of is not None:
            assert abs(totals[f"{cell.reviewer_id} -> {cell.model_id}"]) == pytest.approx(abs(totals[cell.mirror_of]))


def test_a_noise_free_log_flags_no_affinity_from_rounding_error():
    """Scores that are exactly reviewer + candidate effects leave residuals of ~1e-16: they
    are no affinity (5.6e-17 was flagged), and every pair's residual mean is exactly 0."""
    lines = [{"session_id": f"s{item}", "reviewer_id": judge, "model_id": model, "position": column,
              "response_length_chars": 100 + column, "score_value": 8.0 - 2 * column - number}
             for item in range(24) for column, model in enumerate(("a", "b", "c"))
             for number, judge in enumerate(("g1", "g2"))]
    report = build(from_records(lines), resamples=50)
    assert [c.residual_mean.estimate for c in report.affinity] == [0.0] * 6
    assert not [flag for flag in report.flags if flag.kind == "affinity"]
