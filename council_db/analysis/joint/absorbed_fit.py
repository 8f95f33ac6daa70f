"""The joint model of a panel too wide for its dense fit (issue 32): the same model, fitted with
the reviewer and candidate factors absorbed (absorbed.Absorbed: matrix-free, conjugate
gradients) instead of an N x P design and a P x P covariance.

* Estimates: one solve of the normal equations; every effect is the contrast the dense fit
  reads (severity: the reviewer's coefficient less its group's average), equal to the dense
  fit's to rounding.
* Standard errors: the dense path's CR1, exactly, where it is computed. A contrast c's
  estimate moves with the records by a = X M c (M = (X'X)^-1), so its variance is
  G/(G-1) (N-1)/(N-p) sum over sessions g of (sum_g a_i e_i)^2: one solve M c per contrast.
  The non-reviewer, non-candidate columns (slots, self terms, length slopes) are few: their
  unit contrasts give their covariance block, from which slot effects, the position test,
  self-preference and each reviewer's length slope are read as the dense fit reads them. A
  reviewer's or candidate's solve is made only where it has at least 10 sessions (ADR-018's
  floor for a preliminary figure): one solve per subject of a 50,000-reviewer panel is hours,
  and a subject under the floor is reported with its n and no estimate, CI or test.
* p, the estimated parameters in CR1's factor: the rank of the reviewer and candidate columns
  once sessions are absorbed (``_factor_rank``: from the components of the session-reviewer,
  session-candidate and reviewer-candidate graphs, the rank the dense fit's check finds on
  connected panels, on nested ones such as MT-bench's judge prompts, one per session, and on
  disconnected groups), plus the other columns (taken as identified; one whose solve does not
  converge is reported missing).
* Residual SD per reviewer: the dense fit divides by the sum of 1 - h_ii over the reviewer's
  records; the leverage h_ii = 1/n_g + x_i'M x_i needs a solve per record. Here each record
  is charged the average leverage of its session's within-session records,
  h_i = 1/n_g + p/(N - G) (1 - 1/n_g): the denominators still add up to N - G - p, and a
  reviewer's charge differs from its own by a share of its own column's leverage (about one
  record's worth; tests/analysis/test_wide_panels.py). Given for reviewers with >= 10 sessions.
* Affinity's SEs (residual_means) need the dense design: none is given, and affinity takes
  each session's residual totals as the influence (larger SEs: conservative).
"""

from __future__ import annotations

import math

import numpy as np

from council_db.analysis.joint.absorbed import Absorbed, per_level
from council_db.analysis.joint.fixed_totals import FixedTotals
from council_db.analysis.joint.joint_design import connected_groups, display_slots, varied_lengths
from council_db.analysis.joint.joint_fit import JointFit, centred_where_known, per_sd, rounding_noise_removed, scale_use
from council_db.analysis.joint.least_squares import NAN_EFFECT, Effect, Inference, effect_of
from council_db.analysis.loading.score_data import ScoreData, log_length_sd

MIN_SESSIONS = 10  # a reviewer or candidate with fewer gets no estimate in a wide panel (ADR-018's floor)
TOO_FEW = "too few sessions to test in a panel this wide"


def fit(data: ScoreData, use: np.ndarray, fixed: FixedTotals | None, warnings: list[str]) -> JointFit:
    """The joint model on the records ``use`` marks, absorbed (joint_model.fit's preamble chose them)."""
    session = np.asarray(data.session, dtype=np.int64)
    absorbed = session if fixed is None else fixed.group
    _, sess = np.unique(session[use], return_inverse=True)
    _, unit = np.unique(absorbed[use], return_inverse=True)
    rev, mod = np.asarray(data.reviewer, dtype=np.int64)[use], np.asarray(data.model, dtype=np.int64)[use]
    slot = np.asarray(data.slot, dtype=np.int64)[use]
    log_len = np.asarray(data.log_length, dtype=np.float64)[use]
    sized = ~np.isnan(log_len)
    log_len = centred_where_known(log_len, sized, unit)
    y, own = np.asarray(data.score, dtype=np.float64)[use], np.asarray(data.self_review, dtype=bool)[use]
    n_rev, n_mod = len(data.reviewers), len(data.models)
    slots, slot_e, slot_rows = display_slots(slot)
    length_reviewers = np.array(varied_lengths(rev, log_len, sized, unit, n_rev) if sized.any() else [], dtype=int)
    op = Absorbed(unit, np.bincount(unit).astype(float), rev, mod, n_rev, n_mod, slot_e[slot_rows], own,
                  np.unique(rev[own]), log_len, length_reviewers)
    yt = op.demean(y)
    theta = op.solve(op.transposed(yt)[:, None])[0][:, 0]
    e = rounding_noise_removed(yt - op.apply(theta), y)

    groups = connected_groups(rev, mod, n_rev, n_mod)
    n, n_sessions = len(y), int(sess.max()) + 1
    others = op.width - op.starts[2] - (0 if np.any(log_len) else 1)  # a length column of zeros is no parameter
    p = _factor_rank(groups, rev, mod, unit, n_rev, n_mod) + others
    factor = n_sessions / (n_sessions - 1) * (n - 1) / (n - p) if n > p else math.nan
    cr1 = _CR1(op, e, sess, n_sessions, factor)

    missing: list[str] = []
    (by_rev, short_rev), (by_mod, short_mod) = _subjects(cr1, theta, op, groups, (rev, mod), sess, n_sessions - 1)
    severity = {data.reviewers[r]: by_rev.get(r, NAN_EFFECT) for r in sorted({r for g in groups for r in g[0]})}
    quality = {data.models[m]: by_mod.get(m, NAN_EFFECT) for m in sorted({m for g in groups for m in g[1]})}
    small = _Others(cr1, theta, op, n_sessions - 1)
    slot_effects = dict(zip(slots, small.effects(_embed(op, 2, slot_e[slots]), missing,
                                                 [f"display slot {s} effect" for s in slots])))
    position_test = small.inference.wald(_embed(op, 2, slot_e[slots])) if len(slots) > 1 else None
    if len(slots) > 1 and position_test is None:
        missing.append("position bias test")
    self_rows = _embed(op, 3, np.eye(len(op.self_reviewers)))
    by_reviewer = dict(zip((data.reviewers[r] for r in op.self_reviewers),
                           small.effects(self_rows, missing, [f"self-preference of {data.reviewers[r]}"
                                                              for r in op.self_reviewers])))
    identified = np.array([e.identified for e in by_reviewer.values()], dtype=bool)
    self_preference = small.inference.effect(self_rows[identified].mean(axis=0)) if identified.any() else None
    common = _embed(op, 4, np.ones((1, 1)))[0]
    length_per_log = small.inference.effect(common) if np.any(log_len) else NAN_EFFECT
    slopes = common + _embed(op, 5, _deviation_rows(length_reviewers))
    length_by_reviewer = dict(zip((data.reviewers[r] for r in length_reviewers),
                                  small.effects(slopes, missing, [f"length effect of {data.reviewers[r]}"
                                                                  for r in length_reviewers])))
    warnings.extend(_warnings(data, groups, short_rev, short_mod, missing))
    residuals = np.full(data.n_records, np.nan)
    residuals[np.flatnonzero(use)] = e
    size = op.size[unit]
    leverage = 1.0 / size + p / (n - len(op.size)) * (1.0 - 1.0 / size)
    scale = scale_use(data, rev, e, leverage)
    sessions_of = sessions_per_level(rev, sess, n_rev)
    number = {name: i for i, name in enumerate(data.reviewers)}
    scale = {name: (sd if sessions_of[number[name]] >= MIN_SESSIONS else math.nan) for name, sd in scale.items()}
    found = length_per_log if length_per_log.identified else None
    return JointFit(
        severity=severity, quality=quality, slot_effects=slot_effects, position_test=position_test,
        length_per_log=found, length_per_sd=None if found is None else per_sd(found, log_length_sd(data)),
        length_by_reviewer=length_by_reviewer, self_preference=self_preference,
        self_preference_by_reviewer=by_reviewer, residual_sd_by_reviewer=scale, residuals=residuals,
        n_sessions=n_sessions, n_records=n, df=n_sessions - 1, warnings=warnings,
        groups=[([data.reviewers[r] for r in g[0]], [data.models[m] for m in g[1]]) for g in groups],
        not_identified=missing, fixed_totals=fixed, projection=None, absorbed=True,
        too_few=[data.reviewers[r] for r in short_rev] + [data.models[m] for m in short_mod])


class _CR1:
    """Cluster-robust (CR1) influence of contrasts: each session's sum of a_i e_i, a = X M c."""

    def __init__(self, op: Absorbed, e: np.ndarray, sess: np.ndarray, n_sessions: int, factor: float) -> None:
        self.op, self.e, self.sess, self.n_sessions, self.factor = op, e, sess, n_sessions, factor

    def scores(self, contrasts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """sessions x k influence totals of the contrasts (P x k), and which were identified."""
        out, converged = np.zeros((self.n_sessions, contrasts.shape[1])), np.zeros(contrasts.shape[1], dtype=bool)
        step = self.op.batch()
        for start in range(0, contrasts.shape[1], step):
            part = slice(start, start + step)
            solved, converged[part] = self.op.solve(contrasts[:, part])
            weights = self.op.apply(solved) * self.e[:, None]
            out[:, part] = per_level(self.sess, weights, self.n_sessions)
        return out, converged


class _Others:
    """The slot, self and length columns' estimates and CR1 covariance block, as an Inference."""

    def __init__(self, cr1: _CR1, theta: np.ndarray, op: Absorbed, df: int) -> None:
        q = op.width - op.starts[2]
        units = np.zeros((op.width, q))
        units[op.starts[2]:, :] = np.eye(q)
        scores, converged = cr1.scores(units)
        # not identified where its solve does not converge: no contrast on it is estimable
        self.inference = Inference(theta[op.starts[2]:], cr1.factor * scores.T @ scores, np.zeros((q, 0)),
                                   ~converged, df)

    def effects(self, rows: np.ndarray, missing: list[str], labels: list[str]) -> list[Effect]:
        found = self.inference.effects(rows)
        missing.extend(label for label, e in zip(labels, found) if not e.identified)
        return found


def _subjects(cr1: _CR1, theta: np.ndarray, op: Absorbed, groups: list[tuple[list[int], list[int]]],
              levels: tuple[np.ndarray, np.ndarray], sess: np.ndarray,
              df: int) -> list[tuple[dict[int, Effect], list[int]]]:
    """Each reviewer's (block 0) and candidate's (block 1) effect against its group's average,
    with its CR1 SE, where it has MIN_SESSIONS sessions; and the levels under that floor (a
    level alone in its group has nothing to be compared with: neither). Reviewers and
    candidates share the solves' batches."""
    tested, out = [], []
    for block, level in enumerate(levels):
        sessions = sessions_per_level(level, sess, op.starts[block + 1] - op.starts[block])
        short = []
        for members in (g[block] for g in groups):
            if len(members) > 1:
                for member in members:
                    (tested if sessions[member] >= MIN_SESSIONS else short).append((block, member, members))
        out.append(({}, sorted(member for _, member, _ in short)))
    step = op.batch()
    for start in range(0, len(tested), step):
        part = tested[start:start + step]
        contrasts = np.zeros((op.width, len(part)))
        for column, (block, member, members) in enumerate(part):
            contrasts[op.starts[block] + np.asarray(members), column] = -1.0 / len(members)
            contrasts[op.starts[block] + member, column] += 1.0
        scores, converged = cr1.scores(contrasts)
        variances = cr1.factor * (scores ** 2).sum(axis=0)
        for column, (block, member, _) in enumerate(part):
            out[block][0][member] = effect_of(float(contrasts[:, column] @ theta), float(variances[column]), df) \
                if converged[column] else NAN_EFFECT
    return out


def sessions_per_level(level: np.ndarray, sess: np.ndarray, n: int) -> np.ndarray:
    """How many sessions each of the ``n`` levels has a record in."""
    cells = np.unique(level * (int(sess.max()) + 1) + sess)
    return np.bincount(cells // (int(sess.max()) + 1), minlength=n)


def _factor_rank(groups: list[tuple[list[int], list[int]]], rev: np.ndarray, mod: np.ndarray, unit: np.ndarray,
                 n_rev: int, n_mod: int) -> int:
    """The reviewer and candidate columns' rank once the units are absorbed, as the dense fit's
    rank check finds it: each factor's levels less the components it forms with the units (a
    reviewer nested in its sessions is absorbed), less the group offsets both factors span
    (one per reviewer-candidate group, less those the units absorb)."""
    n_units = int(unit.max()) + 1
    reviewers = len(np.unique(rev)) - components(unit, rev, n_units, n_rev)
    candidates = len(np.unique(mod)) - components(unit, mod, n_units, n_mod)
    return reviewers + candidates - (len(groups) - _clusters_of_groups(groups, rev, unit, n_rev))


def _clusters_of_groups(groups: list[tuple[list[int], list[int]]], rev: np.ndarray, unit: np.ndarray,
                        n_rev: int) -> int:
    """How many clusters the reviewer-candidate groups form when groups sharing a unit are
    joined: each group offset the units do not absorb is a parameter (the dense fit's)."""
    if len(groups) == 1:
        return 1
    group_of = np.zeros(n_rev, dtype=np.int64)
    for number, (reviewers, _) in enumerate(groups):
        group_of[reviewers] = number
    return components(unit, group_of[rev], int(unit.max()) + 1, len(groups))


def components(a: np.ndarray, b: np.ndarray, n_a: int, n_b: int) -> int:
    """How many connected components the edges (a_i, b_i) of a bipartite graph form over the
    nodes they touch: ``len(joint_design.connected_groups(a, b, n_a, n_b))``, by propagating
    each node's smallest reachable label along the edges and through the labels (pointer
    jumping) in whole-array steps, not a Python union-find over every edge (1-4 s at 150,000
    records, three calls a fit)."""
    pairs = np.unique(a.astype(np.int64) * n_b + b)
    left, right = pairs // n_b, n_a + pairs % n_b
    label = np.arange(n_a + n_b)
    while True:
        lowest = label.copy()
        np.minimum.at(lowest, left, label[right])
        np.minimum.at(lowest, right, label[left])
        while not np.array_equal(jumped := lowest[lowest], lowest):
            lowest = jumped
        if np.array_equal(lowest, label):
            return len(np.unique(label[np.concatenate([left, right])]))
        label = lowest


def _embed(op: Absorbed, block: int, rows: np.ndarray) -> np.ndarray:
    """Contrast rows over one block's columns, as rows over the slot, self and length columns."""
    out = np.zeros((rows.shape[0], op.width - op.starts[2]))
    out[:, op.starts[block] - op.starts[2]:op.starts[block + 1] - op.starts[2]] = rows
    return out


def _deviation_rows(members: np.ndarray) -> np.ndarray:
    """Each slope reviewer's deviation codes (sum to zero over them: the last is minus the others)."""
    k = len(members)
    if k < 2:
        return np.zeros((k, 0))
    return np.vstack([np.eye(k - 1), -np.ones((1, k - 1))])


def _warnings(data: ScoreData, groups: list, short_rev: list[int], short_mod: list[int],
              missing: list[str]) -> list[str]:
    """Which fit this was, who is under the floor, and what the design cannot identify."""
    said = [f"wide panel ({len(data.reviewers):,} reviewers, {len(data.models):,} candidates): the joint model "
            "absorbed the reviewer and candidate effects (conjugate gradients) instead of its dense fit; "
            "residual SDs charge each record the average leverage, and affinity's SEs keep the fitted effects' "
            "share (conservative)"]
    if short_rev or short_mod:
        said.append(f"{len(short_rev):,} reviewers and {len(short_mod):,} candidates with fewer than "
                    f"{MIN_SESSIONS} sessions are shown with their n and no estimate: {TOO_FEW}")
    if len(groups) > 1:
        said.append(f"reviewers and candidates are not connected ({len(groups):,} separate groups: no reviewer "
                    "scored candidates of another group). Severities and qualities are relative to the average "
                    "within their group and are only comparable within a group")
    if missing:
        said.append("not identified by this design (confounded with other terms; reported as missing): "
                    + "; ".join(missing))
    return said
