"""Presentation orders: seeded, reproducible, and (latin) balanced by slot and by precedence."""

from __future__ import annotations

import json
from collections import Counter

import pytest

import council_db
from council_db.errors import UsageError
from council_db.ingest.orders import presentation_orders, williams_rows


def names(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def slot_counts(orders) -> Counter:
    return Counter((model, slot) for order in orders.orders.values() for slot, model in enumerate(order))


def adjacent_counts(orders) -> Counter:
    return Counter((a, b) for order in orders.orders.values() for a, b in zip(order, order[1:]))


def precedence_counts(orders) -> Counter:
    return Counter((order[i], order[j]) for order in orders.orders.values()
                   for i in range(len(order)) for j in range(i + 1, len(order)))


@pytest.mark.parametrize("n, reviewers", [(2, 2), (4, 4), (4, 8), (6, 6), (8, 16)])
def test_latin_with_even_n_shows_each_model_in_each_slot_and_before_each_other_equally_often(n, reviewers):
    orders = presentation_orders(names("m", n), names("r", reviewers), seed=11, design="latin")
    rounds = reviewers // n

    assert set(slot_counts(orders).values()) == {rounds} and len(slot_counts(orders)) == n * n
    adjacent = adjacent_counts(orders)
    assert len(adjacent) == n * (n - 1) and set(adjacent.values()) == {rounds}  # immediately before
    precedence = precedence_counts(orders)
    assert len(precedence) == n * (n - 1) and set(precedence.values()) == {rounds * n // 2}  # anywhere before
    assert orders.notes == []


@pytest.mark.parametrize("n", [3, 5, 7])
def test_latin_with_odd_n_needs_2n_reviewers_for_carry_over_balance(n):
    orders = presentation_orders(names("m", n), names("r", 2 * n), seed=5)
    assert set(slot_counts(orders).values()) == {2}
    assert len(adjacent_counts(orders)) == n * (n - 1) and set(adjacent_counts(orders).values()) == {2}

    half = presentation_orders(names("m", n), names("r", n), seed=5)
    assert set(slot_counts(half).values()) == {1}, "n reviewers still get every model in every slot once"
    assert "carry-over balance needs a multiple of" in half.notes[0]


def test_latin_with_reviewers_not_a_multiple_of_n_keeps_slot_counts_within_one():
    orders = presentation_orders(names("m", 4), names("r", 6), seed=2)
    counts = slot_counts(orders)
    assert set(counts.values()) <= {1, 2} and sum(counts.values()) == 24
    assert "not a multiple of 4" in orders.notes[0]


def test_williams_rows_are_latin_squares_whose_neighbours_never_repeat():
    for n in range(2, 10):
        rows = williams_rows(n)
        for square in (rows[:n], rows[n:] or rows[:n]):
            assert all(sorted(row) == list(range(n)) for row in square)
            assert all(sorted(column) == list(range(n)) for column in zip(*square))
        assert len({(a, b) for row in rows for a, b in zip(row, row[1:])}) == n * (n - 1)


@pytest.mark.parametrize("design", ["latin", "shuffle"])
def test_the_same_seed_gives_the_same_orders_and_another_seed_other_orders(design):
    models, reviewers = names("m", 5), names("r", 10)
    first = presentation_orders(models, reviewers, seed=42, design=design)
    assert presentation_orders(models, reviewers, seed=42, design=design).orders == first.orders
    assert presentation_orders(models, reviewers, seed=43, design=design).orders != first.orders


def test_shuffle_gives_every_reviewer_a_permutation_of_the_models():
    orders = presentation_orders(names("m", 6), names("r", 50), seed=9, design="shuffle")
    assert all(sorted(order) == names("m", 6) for order in orders.orders.values())
    assert len({tuple(order) for order in orders.orders.values()}) > 1


def test_without_a_seed_one_is_drawn_and_reproduces_the_orders():
    drawn = presentation_orders(names("m", 4), names("r", 4))
    assert presentation_orders(names("m", 4), names("r", 4), seed=drawn.seed).orders == drawn.orders


def test_orders_come_in_llm_councils_enhanced_label_to_model_form():
    orders = council_db.presentation_orders(["a", "b", "c"], ["w"], seed=1)
    mapping = orders.label_to_model("w")
    assert list(mapping) == ["Response A", "Response B", "Response C"]
    assert [v["display_index"] for v in mapping.values()] == [0, 1, 2]
    assert [v["model"] for v in mapping.values()] == orders.orders["w"]


def test_recording_with_per_reviewer_orders_stores_each_reviewers_own_slots(db_path):
    orders = presentation_orders(["a", "b", "c", "d"], ["a", "b", "c", "d"], seed=4)
    answers = [{"model": m, "response": m * 10} for m in "abcd"]
    with council_db.connect(str(db_path)) as council:
        for reviewer in orders.reviewers:  # one call per reviewer: each saw its own label_to_model
            mapping = orders.label_to_model(reviewer)
            council.record_session("s", answers, [{"model": reviewer, "parsed_ranking": {
                "ranking": list(mapping), "scores": {label: 5 for label in mapping}}}], mapping)
        from sqlalchemy import text

        with council.database.engine.connect() as connection:
            stored = connection.execute(text("SELECT reviewer, model, position FROM score_records")).fetchall()
    assert sorted(stored) == sorted((r, m, orders.orders[r].index(m)) for r in "abcd" for m in "abcd")


@pytest.mark.parametrize("models, reviewers, problem", [
    (["a", "a"], ["w"], "a given twice"),
    ([], ["w"], "at least one"),
    ([f"m{i}" for i in range(27)], ["w"], "at most 26"),
])
def test_bad_model_or_reviewer_lists_are_usage_errors(models, reviewers, problem):
    with pytest.raises(UsageError, match=problem):
        presentation_orders(models, reviewers)


def test_cli_json_gives_label_to_model_per_reviewer_and_the_seed(cli):
    done = cli("orders", "--models", "A,B,C,D", "--reviewers", "W,X,Y,Z", "--seed", "7", "--format", "json")
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert (data["design"], data["seed"]) == ("latin", 7)
    assert data["orders"] == presentation_orders(list("ABCD"), list("WXYZ"), seed=7).as_json()["orders"]


def test_cli_csv_has_one_row_per_reviewer_and_one_column_per_label(cli):
    done = cli("orders", "--models", "A,B,C", "--reviewers", "W,X", "--seed", "1", "--design", "shuffle",
               "--format", "csv")
    lines = done.stdout.splitlines()
    assert lines[0] == "reviewer,Response A,Response B,Response C" and len(lines) == 3
    assert "seed 1" in done.stderr


def test_cli_refuses_an_unknown_design(cli):
    done = cli("orders", "--models", "A,B", "--reviewers", "W", "--design", "random")
    assert done.exit_code == 2
