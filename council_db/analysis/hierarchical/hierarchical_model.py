"""The hierarchical joint model a report reads: the joint model's effects (reviewer severity,
candidate quality, display-slot effects for the panel and per reviewer, the length effect for
the panel and per reviewer, self-preference pooled and per reviewer), each drawn from a
population whose spread REML estimates, stated as posterior means with 95% credible intervals
and the posterior probability of their sign; and the populations' spreads (the prior),
the answers' own among them (``cross_products``).

Every figure reads like the joint model's: severity in points vs the panel's average reviewer,
quality vs the average candidate, a slot vs the average slot, length per SD of log length
within model. As the spreads grow the posterior means become the joint model's estimates
(a flat prior); as they shrink to 0 each reviewer's figure becomes the panel's."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from council_db.analysis.hierarchical.cross_products import cumulative, cumulative_strata, strata
from council_db.analysis.hierarchical.posterior import Posterior, PosteriorEffect, posterior
from council_db.analysis.hierarchical.reml import MIN_MEMBERS, Components, fit_components
from council_db.analysis.hierarchical.terms import Terms, terms
from council_db.analysis.hierarchical.updating import Path, cut_points, severity_paths
from council_db.analysis.loading.score_data import ScoreData

MIN_SESSIONS = 2  # a model with an effect per session needs two sessions' comparisons


@dataclass(frozen=True)
class Spread:
    """A population's fitted SD (the prior of its members' effects) and how many members it has."""

    sd: float
    n: int


@dataclass
class HierarchicalFit:
    severity: dict[str, PosteriorEffect]
    quality: dict[str, PosteriorEffect]
    slot_effects: dict[int, PosteriorEffect]  # the panel's: the average reviewer's
    slot_by_reviewer: dict[str, dict[int, PosteriorEffect]]
    length_per_sd: PosteriorEffect | None  # the panel's, points per SD of log length
    length_by_reviewer: dict[str, PosteriorEffect]
    self_preference: PosteriorEffect | None  # the unweighted mean over reviewers with self-reviews
    self_by_reviewer: dict[str, PosteriorEffect]
    slots_differ_tail: float  # the panel's slots all equal: Box-Tiao's tail probability (NaN: one slot)
    spreads: dict[str, Spread]  # component -> its population SD and size
    sigma: float  # residual SD
    n_records: int
    n_sessions: int
    df: float = math.inf  # degrees of freedom of the posterior's t tails
    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # records used (indices)
    warnings: list[str] = field(default_factory=list)
    severity_paths: dict[str, Path] = field(default_factory=dict)  # reviewer -> severity as sessions arrived


def fit(data: ScoreData) -> HierarchicalFit | None:
    """The hierarchical fit of a window; None when it has too little to fit (the joint model's
    warnings say why)."""
    model_terms = terms(data)
    if len(np.unique(model_terms.session)) < MIN_SESSIONS:
        return None
    cuts = cut_points(data.n_sessions)
    snapshots = cumulative_strata(model_terms, cuts)  # one pass; None: too wide to keep at every cut
    whole = snapshots[-1] if snapshots else strata(model_terms)
    components = fit_components(whole, model_terms, model_terms.degrees())
    crosses = [s.weighted(components.rho) for s in snapshots] if snapshots \
        else cumulative(model_terms, cuts, components.rho)  # the last: every session's
    if not math.isfinite(components.sigma):
        return None
    result = summarise(data, model_terms, components, posterior(crosses[-1], model_terms, components))
    result.severity_paths = severity_paths(model_terms, data.reviewers, components, cuts, crosses)
    return result


def summarise(data: ScoreData, t: Terms, components: Components, post: Posterior) -> HierarchicalFit:
    """Every reported figure as a contrast of the posterior."""
    blocks, size = t.blocks(), t.q + t.p
    fixed_at = {name: t.q + i for i, name in enumerate(t.fixed_names)}
    present_rev = np.unique(t.reviewer).tolist()
    present_mod = np.unique(t.model).tolist()

    def vs_average(block: slice, members: list[int]) -> dict[int, PosteriorEffect]:
        out = {}
        for member in members:
            row = np.zeros(size)
            row[block.start + np.asarray(members)] = -1.0 / len(members)
            row[block.start + member] += 1.0
            out[member] = post.effect(row)
        return out

    warnings = _warnings(t, components)
    identified = {name: components.members.get(name, 0) > 0 for name in blocks}
    severity = {data.reviewers[r]: e for r, e in vs_average(blocks["reviewer"], present_rev).items()} \
        if identified["reviewer"] else {}
    quality = {data.models[m]: e for m, e in vs_average(blocks["candidate"], present_mod).items()} \
        if identified["candidate"] else {}
    slot_rows = _slot_rows(t, blocks["slot"], fixed_at, size)
    shown = sorted(set(t.reviewer[t.slot_index >= 0].tolist()))
    panel_slots = [np.mean([slot_rows[r][i] for r in shown], axis=0) for i in range(len(t.slots))] \
        if slot_rows else []
    slot_effects = {s: post.effect(row) for s, row in zip(t.slots, panel_slots)}
    slot_by_reviewer = {data.reviewers[r]: {s: post.effect(slot_rows[r][i]) for i, s in enumerate(t.slots)}
                        for r in shown} if slot_rows else {}
    length_rows = _per_reviewer(t, blocks["length"], fixed_at.get("length"), present_rev, size)
    self_rows = _per_reviewer(t, blocks["self"], fixed_at.get("self"), t.self_reviewers, size, dense=False)
    return HierarchicalFit(
        severity=severity, quality=quality, slot_effects=slot_effects, slot_by_reviewer=slot_by_reviewer,
        length_per_sd=post.effect(np.mean(list(length_rows.values()), axis=0)) if length_rows else None,
        length_by_reviewer={data.reviewers[r]: post.effect(row) for r, row in length_rows.items()},
        self_preference=post.effect(np.mean(list(self_rows.values()), axis=0)) if self_rows else None,
        self_by_reviewer={data.reviewers[r]: post.effect(row) for r, row in self_rows.items()},
        slots_differ_tail=post.origin_tail(np.array(panel_slots[:-1])) if panel_slots else math.nan,
        spreads=_spreads(components),
        sigma=components.sigma, n_records=len(t.rows), n_sessions=len(np.unique(t.session)), df=post.df,
        rows=t.rows,
        warnings=warnings,
    )


def _slot_rows(t: Terms, block: slice, fixed_at: dict[str, int], size: int) -> dict[int, list[np.ndarray]]:
    """Per reviewer, per slot: the contrast of its slot effect vs its average slot (the panel's
    effect-coded slot effect plus its own deviation from its own average)."""
    k = len(t.slots)
    if k < 2:
        return {}
    codes = np.vstack([np.eye(k - 1), -np.ones((1, k - 1))])
    first = fixed_at.get(f"slot {t.slots[0]}")
    rows: dict[int, list[np.ndarray]] = {}
    for r in range(t.n_reviewers):
        mine = []
        for i in range(k):
            row = np.zeros(size)
            if first is not None:
                row[first:first + k - 1] = codes[i]
            own = block.start + r * k
            row[own:own + k] -= 1.0 / k
            row[own + i] += 1.0
            mine.append(row)
        rows[r] = mine
    return rows


def _per_reviewer(t: Terms, block: slice, fixed: int | None, reviewers: list[int], size: int,
                  dense: bool = True) -> dict[int, np.ndarray]:
    """Per reviewer: the panel's fixed term plus its own deviation (the block has a column per
    reviewer when ``dense``, else one per listed reviewer in order)."""
    if fixed is None:
        return {}
    rows = {}
    for number, r in enumerate(reviewers):
        row = np.zeros(size)
        row[fixed] = 1.0
        if block.stop > block.start:
            row[block.start + (r if dense else number)] = 1.0
        rows[r] = row
    return rows


def _spreads(components: Components) -> dict[str, Spread]:
    """Each informed population's spread (NaN: a flat prior) and its members."""
    return {name: Spread(components.spread(name), n) for name, n in components.members.items() if n}


WHAT = {"reviewer": "reviewers' severities", "candidate": "candidates' qualities",
        "slot": "reviewers' own slot effects", "length": "reviewers' own length effects",
        "self": "reviewers' own self-preferences"}


def _warnings(t: Terms, components: Components) -> list[str]:
    """What the fit could not pool or estimate, and why."""
    out = []
    if t.severity_absorbed:
        out.append("hierarchical model: the design fixes each reviewer's totals, so severity is not estimated")
    elif components.members.get("reviewer", 0) == 0:
        out.append("hierarchical model: severity is not identified (no session has scores by two reviewers)")
    for name in components.flat:
        out.append(f"hierarchical model: the {WHAT[name]} are not pooled ({components.members[name]} informed "
                   f"by the data; a spread needs at least {MIN_MEMBERS}, and one the data bound): a flat prior, "
                   "as the joint model's")
    return out
