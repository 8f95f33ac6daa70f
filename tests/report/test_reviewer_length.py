"""Each reviewer's own length effect in its JSON profile (contract 1.10.0): points per SD of
log length with its n and CI, as its self-preference is; the report's adjusted length is their
mean; and no new flag family (the verbosity flag stays one test, on that mean)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from council_db.analysis.loading.score_data import from_records
from council_db.report import model, render_html
from council_db.report.builder import build
from tests.conftest import simulated

MODELS = ["openai/gpt-4o", "anthropic/claude-3-5-sonnet", "google/gemini-1.5-pro", "meta-llama/llama-3.1-70b"]
OWN_VERBOSITY = [0.6, 0.2, -0.2, 0.0]  # points per SD of log length


def test_each_reviewers_length_effect_is_in_its_profile_with_n_and_ci_and_the_adjusted_length_is_their_mean():
    records, truth = simulated(sessions=150, seed=9, models=MODELS, reviewer_verbosity=dict(zip(MODELS, OWN_VERBOSITY)))
    report = build(from_records(records), resamples=20)
    as_json = json.loads(model.to_json(report))
    profiles = {p.reviewer_id: p for p in report.reviewers}
    for name, planted in zip(MODELS, OWN_VERBOSITY):
        own = profiles[name].length_effect
        per_sd = planted * report.length.log_length_sd / truth["log_length_sd"]  # the sample's SD, not the plan's
        se = (own.ci_high - own.ci_low) / 2 / 1.97
        assert abs(own.estimate - per_sd) < 3 * se, (name, own, per_sd)  # four intervals: 3 SEs, not 95%
        assert own.n_records == profiles[name].records and own.n_sessions == 150
    adjusted = report.length.adjusted_effect
    own_slopes = [profiles[name].length_effect.estimate for name in MODELS]
    assert adjusted.estimate == pytest.approx(np.mean(own_slopes), abs=1e-12)  # the common slope: their mean
    assert profiles["openai/gpt-4o"].length_effect.ci_low > 0  # its taste for length is found
    assert {f.kind for f in report.flags} <= {"verbosity", "reviewer_severity", "position", "self_preference"}
    assert not [f for f in report.flags if f.kind == "verbosity" and f.subject != "answer length"]
    assert as_json["reviewers"][0]["length_effect"]["n_records"] == report.reviewers[0].records
    drawn = render_html.length_chart(report).svg
    assert all(f">{name}</text>" in drawn for name in MODELS)  # the HTML report's length chart: one row each


def test_the_contract_describes_the_reviewers_length_effect_and_its_minor_version_is_bumped():
    schema = model.json_schema()
    profile = next(definition for name, definition in schema["$defs"].items() if name == "ReviewerProfile")
    assert "length_effect" in profile["properties"]
    assert model.REPORT_SCHEMA_VERSION == "1.10.0"
