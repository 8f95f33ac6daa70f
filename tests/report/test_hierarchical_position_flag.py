"""`--method bayes` states position as one statement, "the slots differ", as the frequentist
report's test of all slots equal does: its evidence the Box-Tiao tail of "all slots equal"
under the slots' joint posterior, flagged by the same Benjamini-Hochberg rule. A null window
where one slot alone looks clear of 0 is not flagged; a planted slot effect still is, naming
the slot that leads; with one contrast the tail is the per-slot two-sided tail."""

from __future__ import annotations

import io
import json

import numpy as np

from council_db.analysis.hierarchical import hierarchical_model
from council_db.analysis.loading.score_data import ScoreData, from_records, keep_sessions
from council_db.report.hierarchical_section import hierarchical
from council_db.simulate import SimulationConfig, write_jsonl

MODELS = ["openai/gpt-4o", "anthropic/claude-3-5-sonnet", "google/gemini-1.5-pro", "meta-llama/llama-3.1-70b"]


def window(seed: int, sessions: int, **planted) -> ScoreData:
    """benchmarks/bench_bayes.py's history of 50 sessions (four judges scoring four candidates),
    its first ``sessions``."""
    quality = np.random.default_rng([seed, 7]).normal(0.0, 0.7, len(MODELS))
    out = io.StringIO()
    write_jsonl(SimulationConfig(sessions=50, seed=seed, models=MODELS, model_quality=dict(zip(MODELS, quality)),
                                 **planted), out)
    data = from_records(json.loads(line) for line in out.getvalue().splitlines())
    return keep_sessions(data, np.arange(data.n_sessions) < sessions)


def test_a_null_window_where_one_slot_alone_looks_clear_of_zero_is_not_flagged():
    # null history 500113 of bench_bayes's design with answer quality (SD 0.5), at 20 sessions:
    # slot 0's own P(> 0) is 0.999, and a statement per slot flagged it (q 0.014 over ten statements)
    part = hierarchical(window(500_113, 20, answer_sd=0.5), "low")
    slot_0 = next(s for s in part.position if s.position == 0)
    assert max(slot_0.p_positive, 1 - slot_0.p_positive) > 0.995
    assert not [f for f in part.flags if f.kind == "position"]


def test_a_planted_slot_effect_is_still_flagged_naming_the_slot_that_leads():
    part = hierarchical(window(500_113, 20, answer_sd=0.5, position_effects=[0.0, 0.0, 0.0, 0.5]), "low")
    flag = next(f for f in part.flags if f.kind == "position")
    assert (flag.subject, flag.statement) == ("display slots", "differ; slot 3 leads and scores higher than the "
                                                               "average slot")
    assert flag.metric.position == 3 and flag.metric.ci_low > 0 and flag.probability > 0.95 and flag.q_value <= 0.05


def test_with_two_slots_the_joint_tail_is_the_slots_two_sided_tail():
    data = window(3, 20, candidates_per_session=2, position_effects=[0.2])
    fit = hierarchical_model.fit(data)
    slot = fit.slot_effects[0]
    assert np.isclose(fit.slots_differ_tail, 2 * (1 - slot.p_sign), rtol=1e-6)
