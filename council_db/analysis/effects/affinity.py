"""ADR-015's other biases, on joint-model residuals so that severity, quality, slot and length
are already taken out:

* affinity (favouritism, sycophancy): the mean residual of each reviewer x candidate pair. The
  joint model gives every reviewer one severity and every candidate one quality; a pair whose
  scores sit above both is a reviewer that likes that candidate in particular. Self pairs are
  left out: the joint model has a self-preference term for them. CI clustered by session.
  The residuals sum to zero over each reviewer's and each candidate's scores (both are in the
  model), so where only two pairs hold a candidate's scores (two reviewers) or a reviewer's
  (two candidates), their residual totals are equal and opposite: one contrast, seen twice.
  Such mirror images are tested once (``Cell.mirror_of``). A candidate only one reviewer
  scored (a lone judge's log) has its residuals summing to zero in that one pair: no affinity
  there to report, so none is (it read -1.6e-17 with p 1.00 on FastChat's pairwise judgments).
* anchoring: does the first answer a reviewer sees pull its other scores along? Per
  (session, reviewer) the slope of the other answers' mean residual on the first-shown
  answer's residual, minus the same slope for the last-shown answer (a placebo: any coupling
  the session effect or a reviewer's mood that day creates is the same for both, and cancels).
  Positive = assimilation (a high first score lifts the rest), negative = contrast.
* self-consistency: where one reviewer scored the same answer more than once (same session,
  candidate and length), the mean absolute difference between the scores (test-retest).
"""

from __future__ import annotations

import math

import msgspec
import numpy as np

from council_db.analysis.joint.residual_means import ResidualProjection
from council_db.analysis.loading.score_data import ScoreData, keep_records, known_lengths
from council_db.analysis.stats import (
    Estimate,
    clustered_mean_from_totals,
    mean_figure_from_totals,
)
from council_db.analysis.stats.agreement import repeat_pairs
from council_db.analysis.stats.answers import answer_index
from council_db.analysis.stats.clustered import clustered_mean_from_influence
from council_db.analysis.stats.slopes import SlopePart, slope_contrast_cr2
from council_db.analysis.stats.unique_rows import distinct

MIN_PAIR_SESSIONS = 10


class Cell(msgspec.Struct, frozen=True):
    reviewer: str
    model: str
    estimate: Estimate
    n_records: int
    mirror_of: str | None = None  # the label of the pair tested in this one's place

    @property
    def label(self) -> str:
        return f"{self.reviewer} -> {self.model}"


def affinity(data: ScoreData, residuals: np.ndarray, projection: ResidualProjection | None = None) -> list[Cell]:
    """Mean residual per reviewer x candidate pair (not self), where the pair met in at least
    MIN_PAIR_SESSIONS sessions. Per-session totals by bincount, for those pairs alone: no pass
    over the records per pair, nothing the size of every pair x every session.
    With the fit's ``projection`` the SEs take out what the fitted effects absorbed
    (joint/residual_means); without it they are CR1 on the pair's residual totals (too wide)."""
    use = np.isfinite(residuals) & ~data.self_review
    n_models, g = len(data.models), data.n_sessions
    pair = data.reviewer[use] * n_models + data.model[use]
    n_pairs = len(data.reviewers) * n_models
    sessions_held = np.bincount(distinct(pair * g + data.session[use]) // g, minlength=n_pairs)
    fitted = np.isfinite(residuals)
    held = np.bincount(data.reviewer[fitted] * n_models + data.model[fitted], minlength=n_pairs) > 0
    grid = held.reshape(-1, n_models)
    # a candidate only one reviewer scored (or a reviewer of one candidate): its quality (severity)
    # absorbs the pair's residuals, which add up to zero by construction, so there is no affinity
    alone = ((grid.sum(axis=0) == 1)[None, :] | (grid.sum(axis=1) == 1)[:, None]).ravel()
    reported = np.flatnonzero((sessions_held >= MIN_PAIR_SESSIONS) & ~alone)
    row, totals, counts = _reported_totals(pair, data.session[use], residuals[use], reported, n_pairs, g)
    tested = _mirror_images(grid, np.bincount(pair, weights=residuals[use], minlength=n_pairs),
                            np.bincount(pair, minlength=n_pairs), reported.tolist())

    def name(code: int) -> str:
        return f"{data.reviewers[code // n_models]} -> {data.models[code % n_models]}"

    if projection is None:
        estimates = [clustered_mean_from_totals(totals[i], counts[i]) for i in range(len(reported))]
    else:
        group = np.full(data.n_records, -1, dtype=np.int64)
        group[use] = row[pair]
        influence = projection.influence(group, len(reported), totals)
        estimates = [_pair_mean(totals[i], counts[i], influence[i]) for i in range(len(reported))]
    return [Cell(data.reviewers[code // n_models], data.models[code % n_models], estimate, int(n),
                 None if tested[code] == code else name(tested[code]))
            for code, estimate, n in zip(reported.tolist(), estimates, counts.sum(axis=1).tolist())]


def _reported_totals(pair: np.ndarray, session: np.ndarray, residuals: np.ndarray, reported: np.ndarray,
                     n_pairs: int, g: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pair its row among the reported (-1: not reported), and the reported pairs' residual
    totals and record counts per session (rows: reported pairs, columns: sessions). Only theirs:
    every pair's would be 80 GB for 50,000 reviewers x 4 candidates x 50,000 sessions."""
    row = np.full(n_pairs, -1, dtype=np.int64)
    row[reported] = np.arange(len(reported))
    mine = row[pair] >= 0
    cell = row[pair[mine]] * g + session[mine]
    totals = np.bincount(cell, weights=residuals[mine], minlength=len(reported) * g).reshape(-1, g)
    counts = np.bincount(cell, minlength=len(reported) * g).reshape(-1, g)
    return row, totals, counts


def _pair_mean(totals: np.ndarray, counts: np.ndarray, influence: np.ndarray) -> Estimate:
    """The pair's mean residual with the CR1 SE of its influence (centred: the pair's own
    mean, which the influence also carries, is not sampling noise); G = the pair's sessions."""
    n = float(counts.sum())
    mean = float(totals.sum()) / n
    return clustered_mean_from_influence(mean, influence - counts * mean, n, int((counts > 0).sum()))


def _mirror_images(held: np.ndarray, total: np.ndarray, count: np.ndarray, reported: list[int]) -> dict[int, int]:
    """Each reported pair -> the pair tested in its place (itself, unless it is the mirror image
    of a pair before it). Two pairs are mirror images when they are the only pairs (self pairs
    included) holding a reviewer's row or a candidate's column of ``held``, and their residual
    totals cancel (a check that the design held both effects)."""
    n_models = held.shape[1]
    first = {code: code for code in reported}

    def root(code: int) -> int:
        while first[code] != code:
            code = first[code]
        return code

    rows = [(np.flatnonzero(row) + r * n_models).tolist() for r, row in enumerate(held)]
    columns = [(np.flatnonzero(column) * n_models + m).tolist() for m, column in enumerate(held.T)]
    for line in rows + columns:
        if len(line) == 2 and all(code in first for code in line):
            a, b = line
            if math.isclose(total[a], -total[b], rel_tol=1e-6, abs_tol=1e-9 * (count[a] + count[b])):
                low, high = sorted((root(a), root(b)))
                first[high] = low
    return {code: root(code) for code in reported}


class Anchoring(msgspec.Struct, frozen=True):
    reviewer: str | None  # None: pooled over reviewers
    estimate: Estimate
    n_records: int


def anchoring(data: ScoreData, residuals: np.ndarray) -> list[Anchoring]:
    """The pooled anchoring effect first, then one per reviewer; empty without display slots
    or without reviewers that saw at least three answers in a session."""
    table = _first_last(data, residuals)
    if table is None:
        return []
    session, reviewer, first, first_rest, last, last_rest, records = table
    out = []
    pooled = _slope_difference(session, first, first_rest, last, last_rest)
    if pooled is not None:
        out.append(Anchoring(None, pooled, int(records.sum())))
    for r in distinct(reviewer).tolist():
        mine = reviewer == r
        estimate = _slope_difference(session[mine], first[mine], first_rest[mine], last[mine], last_rest[mine])
        if estimate is not None:
            out.append(Anchoring(data.reviewers[r], estimate, int(records[mine].sum())))
    return out


def _first_last(data: ScoreData, residuals: np.ndarray):
    """Per (session, reviewer) with >= 3 shown, fitted answers: the residual of the first- and
    last-shown answer and the mean residual of the rest in each case, and the record count."""
    use = np.flatnonzero((data.slot >= 0) & np.isfinite(residuals))
    if len(use) == 0:
        return None
    order = use[np.lexsort((data.slot[use], data.reviewer[use], data.session[use]))]
    key = data.session[order] * len(data.reviewers) + data.reviewer[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    ends = np.r_[starts[1:], len(order)]
    size = ends - starts
    keep = size >= 3
    if keep.sum() < MIN_PAIR_SESSIONS:
        return None
    starts, ends, size = starts[keep], ends[keep], size[keep].astype(float)
    e = residuals[order]
    totals = np.add.reduceat(e, np.r_[0, np.flatnonzero(key[1:] != key[:-1]) + 1])[keep]
    first, last = e[starts], e[ends - 1]
    return (data.session[order][starts], data.reviewer[order][starts], first, (totals - first) / (size - 1),
            last, (totals - last) / (size - 1), size)


def _slope_difference(session, x1, y1, x2, y2) -> Estimate | None:
    """Slope of y1 on x1 minus slope of y2 on x2 (least squares with intercepts), with a
    CR2 (by session) SE, t with Bell-McCaffrey df (stats/slopes.slope_contrast_cr2)."""
    if len(distinct(session)) < MIN_PAIR_SESSIONS:
        return None
    found = slope_contrast_cr2([SlopePart(x1, y1, session), SlopePart(x2, y2, session, -1.0)],
                               method="slope difference, CR2 by session, Bell-McCaffrey df")
    return found if found.computable else None


class Retest(msgspec.Struct, frozen=True):
    reviewer: str
    mean_abs_difference: Estimate
    pairs: int


def self_consistency(data: ScoreData) -> list[Retest]:
    """Per reviewer, over every pair of its scores of one answer (same session, candidate,
    length, which must be known: see agreement.self_consistency); empty when no answer was
    scored twice by the same reviewer.

    The mean |difference| is a figure with its n and CI, without a p-value: it is never below
    0, so a test against 0 calls any disagreement significant, and there is no other null at
    which a reviewer's retest noise would be a finding (how much noise is too much is the
    reader's call, which the CI informs)."""
    data = keep_records(data, known_lengths(data))
    unit, _ = answer_index(data.session, data.model, data.log_length)
    found = repeat_pairs(unit * len(data.reviewers) + data.reviewer, data.score)
    reviewer, session = data.reviewer[found.first], data.session[found.first]
    out = []
    for r in distinct(reviewer).tolist():
        mine = reviewer == r
        totals = np.bincount(session[mine], weights=found.absolute[mine], minlength=data.n_sessions)
        pairs = np.bincount(session[mine], weights=found.pairs[mine], minlength=data.n_sessions)
        out.append(Retest(data.reviewers[r], mean_figure_from_totals(totals, pairs), int(pairs.sum())))
    return out
