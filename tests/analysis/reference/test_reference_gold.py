"""Accuracy against gold labels as LLMBar's statistics.json and JudgeBench's metrics count it:
per display order, both orders right, the same verdict in both orders, and the net rule."""

from __future__ import annotations

import numpy as np
import pytest

from council_db.analysis.loading.score_data import from_rows
from council_db.analysis.reference.summary import reference_summary

WIN = {"1": (1.0, 0.0), "2": (0.0, 1.0), None: (0.5, 0.5)}  # LLMBar's winner; None: no verdict, read as a tie


def llmbar_rows(items: dict[str, tuple[str, str | None, str | None]]) -> list[tuple]:
    """Per item (gold label, winner with output_1 shown first, winner with output_2 shown first)."""
    out = []
    for number, (item, (label, listed, swapped)) in enumerate(items.items()):
        one, two = f"{item}/output_1", f"{item}/output_2"
        for winner, first_slot_of_one in ((listed, 0), (swapped, 1)):
            a, b = WIN[winner]
            out += [(item, number, "judge", one, first_slot_of_one, 100, a),
                    (item, number, "judge", two, 1 - first_slot_of_one, 120, b)]
        a, b = WIN[label]
        out += [(item, number, "key", one, 0, 100, a), (item, number, "key", two, 1, 120, b)]
    return out


def test_accuracy_per_order_both_orders_and_the_same_verdict_count_as_llmbar():
    items = {"q1": ("1", "1", "1"), "q2": ("2", "1", "2"), "q3": ("1", "2", "2"), "q4": ("2", "2", None)}
    summary = reference_summary(from_rows(llmbar_rows(items)), {"key": "gold"})
    assert summary.reference_kind == "gold" and [j.judge for j in summary.judges] == ["judge"]
    gold = summary.judges[0].gold
    counts = {name: (getattr(gold, name).count, getattr(gold, name).of) for name in
              ("accuracy_listed", "accuracy_swapped", "accuracy", "both_correct", "same_verdict", "net_correct")}
    assert counts == {"accuracy_listed": (2, 4), "accuracy_swapped": (2, 4), "accuracy": (4, 8),
                      "both_correct": (1, 4), "same_verdict": (2, 4), "net_correct": (2, 4)}
    assert gold.accuracy_listed.estimate.estimate == 0.5 and gold.accuracy_listed.estimate.n_sessions == 4
    right_every_time = reference_summary(from_rows(llmbar_rows({f"q{i}": ("1", "1", "1") for i in range(30)})),
                                         {"key": "gold"}).judges[0].gold.accuracy_listed.estimate
    assert right_every_time.estimate == 1.0 and 0.85 < right_every_time.ci_low < 1.0  # Wilson: not [1, 1]


def judgebench_net_right(label: str, decisions: tuple[str | None, str | None]) -> bool:
    """JudgeBench's compute_final_metrics (utils/metrics.py), the second order's decision
    already flipped back: +1 for matching the label, -1 for its flip, right when positive."""
    flipped = {"A>B": "B>A", "B>A": "A>B"}[label]
    return sum((d == label) - (d == flipped) for d in decisions) > 0


def test_the_net_rule_matches_judgebench_on_every_combination_of_verdicts():
    rng = np.random.default_rng(4)
    options = ["1", "2", None]
    items = {f"q{i}": (str(rng.integers(1, 3)), options[rng.integers(0, 3)], options[rng.integers(0, 3)])
             for i in range(60)}
    summary = reference_summary(from_rows(llmbar_rows(items)), {"key": "gold"})
    named = {"1": "A>B", "2": "B>A", None: None}
    expected = sum(judgebench_net_right(named[label], (named[a], named[b])) for label, a, b in items.values())
    assert summary.judges[0].gold.net_correct.count == expected
    assert summary.judges[0].gold.net_correct.estimate.has_interval


def test_gold_beside_human_raters_gets_its_own_section_and_humans_stay_the_reference():
    rows = llmbar_rows({"q1": ("1", "1", "1"), "q2": ("2", "2", "2"), "q3": ("1", "1", "2")})
    for number, item in enumerate(("q1", "q2", "q3")):
        rows += [(item, number, "ann", f"{item}/output_1", 0, 100, 1.0), (item, number, "ann", f"{item}/output_2", 1,
                                                                           120, 0.0)]
    summary = reference_summary(from_rows(sorted(rows, key=lambda r: r[1])), {"key": "gold", "ann": "human"})
    assert summary.reference_kind == "human" and summary.raters == ["ann"]
    judge = summary.judges[0]
    assert judge.gold.accuracy.count == 5  # q3 swapped is the only wrong verdict
    assert judge.pairwise.with_reference.agreement.estimate == pytest.approx(1 / 3)  # ann says output_1 each time
