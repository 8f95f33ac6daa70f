"""Presentation orders per reviewer: what makes position effects identifiable.

With one shuffle per session (llm-council today, ADR-017) every reviewer sees the same
order, so within a session a slot's mean is also that answer's quality. Giving each
reviewer its own order separates the two:

- ``shuffle``: an independent seeded shuffle per reviewer;
- ``latin``: a balanced (Williams) Latin square. Its rows go to reviewers in turn; with a
  multiple of n reviewers every model is shown in every slot equally often, and with a
  multiple of n (n even) or 2n (n odd) reviewers every model is shown immediately before
  every other equally often (first-order carry-over balance). The seed relabels the models
  and orders the rows, which keeps both properties.

Orders come in llm-council's enhanced ``label_to_model`` form: labels "Response A", "Response
B", ... in display order, each with its ``display_index``.
"""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass, field
from typing import Any

from council_db.errors import UsageError

DESIGNS = ("latin", "shuffle")
MAX_MODELS = 26  # labels Response A..Z


@dataclass
class Orders:
    design: str
    seed: int
    models: list[str]
    reviewers: list[str]
    orders: dict[str, list[str]]  # reviewer -> models, first shown first
    notes: list[str] = field(default_factory=list)

    def label_to_model(self, reviewer: str) -> dict[str, dict[str, Any]]:
        """The mapping a council passes to its reviewer (and to record_session)."""
        return {label(i): {"model": model, "display_index": i} for i, model in enumerate(self.orders[reviewer])}

    def as_json(self) -> dict[str, Any]:
        return {"design": self.design, "seed": self.seed,
                "orders": {reviewer: self.label_to_model(reviewer) for reviewer in self.reviewers},
                "notes": self.notes}

    def rows(self) -> list[dict[str, str]]:
        """One row per reviewer, one column per label (display order)."""
        return [{"reviewer": reviewer, **{label(i): m for i, m in enumerate(self.orders[reviewer])}}
                for reviewer in self.reviewers]


def label(index: int) -> str:
    return f"Response {chr(ord('A') + index)}"


def williams_rows(n: int) -> list[list[int]]:
    """A Williams design on 0..n-1: n rows for even n, 2n (the square and its mirror) for odd n.
    Each row i is the sequence 0, 1, n-1, 2, n-2, ... shifted by i (mod n)."""
    first = [0] + [(j + 1) // 2 if j % 2 else n - j // 2 for j in range(1, n)]
    square = [[(value + i) % n for value in first] for i in range(n)]
    return square if n % 2 == 0 else square + [row[::-1] for row in square]


def _checked_names(names: list[str], option: str) -> list[str]:
    names = [name.strip() for name in names if name.strip()]
    if not names:
        raise UsageError(f"{option}: give at least one name, comma-separated")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise UsageError(f"{option}: {', '.join(repeated)} given twice; each name once")
    return names


def _latin(models: list[str], reviewers: list[str], rng: random.Random) -> tuple[dict[str, list[str]], list[str]]:
    n = len(models)
    relabelled = models[:]
    rng.shuffle(relabelled)
    rows = williams_rows(n)
    halves = [rows[:n], rows[n:]]  # each half is a Latin square: keep it whole for the slot balance
    for half in halves:
        rng.shuffle(half)
    ordered = halves[0] + halves[1]
    orders = {reviewer: [relabelled[k] for k in ordered[i % len(ordered)]] for i, reviewer in enumerate(reviewers)}
    notes = []
    if len(reviewers) % n:
        notes.append(f"{len(reviewers)} reviewers is not a multiple of {n} models: slot counts per model differ "
                     "by at most one")
    elif len(reviewers) % len(rows):
        notes.append(f"with {n} models (odd) carry-over balance needs a multiple of {len(rows)} reviewers")
    return orders, notes


def presentation_orders(models: list[str], reviewers: list[str], *, seed: int | None = None,
                        design: str = "latin") -> Orders:
    """Seeded display orders per reviewer; the same inputs and seed give the same orders.
    Without a seed one is drawn and returned, so the orders can be reproduced."""
    models, reviewers = _checked_names(models, "--models"), _checked_names(reviewers, "--reviewers")
    if len(models) > MAX_MODELS:
        raise UsageError(f"--models: {len(models)} models; labels run Response A..Z, so at most {MAX_MODELS}")
    if design not in DESIGNS:
        raise UsageError(f"--design: {design!r}; choose latin or shuffle")
    seed = secrets.randbelow(2**32) if seed is None else seed
    rng = random.Random(seed)
    if design == "latin":
        orders, notes = _latin(models, reviewers, rng)
    else:
        orders, notes = {}, []
        for reviewer in reviewers:
            order = models[:]
            rng.shuffle(order)
            orders[reviewer] = order
    return Orders(design, seed, models, reviewers, orders, notes)
