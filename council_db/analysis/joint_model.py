"""One joint model for every effect that raw means would confound.

    score ~ session + candidate model + reviewer severity + display slot
            + log length + self-review (one term per reviewer)

Raw reviewer means mix a reviewer's severity with *what* it reviewed (a reviewer that never
sees its own strong answer looks harsh); raw length slopes mix verbosity with *which* models
write long answers. Fitting everything at once, with a fixed effect per session and the
candidate model in the model, separates them.

Method
------
* Session fixed effects are absorbed by demeaning the score and every regressor within session
  (``np.bincount``; no per-session loop). Sessions with a single record carry no within-session
  information: they are left out (as reghdfe does); their residual is NaN.
* Effect coding, so numbers read naturally: reviewer severity is relative to the average
  reviewer (unweighted, sums to zero; negative = harsh), candidate quality relative to the
  average candidate, slot effects relative to the average display slot. Records whose position
  is not a display slot (slot == -1, schema < 1.2.0) get 0 in every slot column: they are taken
  to sit at the average slot and still inform every other effect.
* Self-preference: one term per reviewer that has self-reviews; the pooled self-preference is
  the unweighted mean of the identified reviewer terms (a linear contrast, with its SE).
* Length: the coefficient of log(chars + 1), *within candidate model* (model effects are in the
  model), per unit of log length; ``length_per_sd`` multiplies estimate, SE and CI by the sample
  SD of log length (``analysis_data.log_length_sd``), treating that SD as fixed (its own
  sampling error is ignored; p-value unchanged).
* OLS on the demeaned design, columns scaled to unit norm: Cholesky of the Gram matrix with one
  step of iterative refinement when it is well conditioned (in practice always, for these
  dummy-coded designs), Householder QR (lstsq) otherwise; see ``_solve``.
* Covariance: cluster-robust by session, CR1 with the small-sample factor
  ``G/(G-1) * (N-1)/(N-P)``, where G = sessions used, N = records used and P = estimated slope
  parameters. The session fixed effects are *not* counted in P:
  they are nested within the clusters, and counting them would overstate the correction
  enormously with many small sessions (Cameron & Miller 2015, sec. VI.B; the xtreg-fe /
  reghdfe convention).
* Inference: t with G-1 degrees of freedom (``JointFit.df``) for every effect (estimate, SE,
  95% CI, two-sided p). Position bias: Wald test that all slot effects are zero, reported as
  F = W/q with (q, G-1) degrees of freedom.
* Residual SD per reviewer ("scale use"): sqrt(RSS_r / sum_r(1 - h_ii)), with h_ii the leverage
  in the full model (1/n_session + leverage of the demeaned design). The denominators add up
  to N - G - P over all reviewers, so each reviewer is charged its share of the parameters;
  RSS_r / df_r is exactly unbiased when all errors share one variance and close to unbiased
  when each reviewer has its own.

Identification
--------------
The design is checked and every problem becomes a human-readable warning; nothing raises.
Reviewers and candidates are linked in a bipartite graph (who scored whom); if it falls apart
into several groups, severities and qualities are relative to the average *within their group*
(not comparable across groups) and the warning lists the groups; one nuisance offset per extra
group absorbs the group-level difference where groups share sessions. A rank check (sequential
Cholesky in a fixed priority order: reviewers, models, slots, group offsets, self terms,
length) drops columns that the others already explain, so self and length terms are the ones
dropped when they cannot be told apart (a dropped self or length term is taken as zero and
named). Reviewer, model and slot effects are then checked for estimability (orthogonal to the
null space their dropped columns leave); one that is not identified is
reported as an Effect of NaNs (dict entries) or None (``length_*``, ``self_preference``), and
named in a warning.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from scipy import special

from council_db.analysis.score_data import ScoreData, log_length_sd

_RANK_TOL = 1e-10  # squared relative residual norm at or below which a column counts as dependent
_ZERO_TOL = 1e-10  # a demeaned column this small relative to the raw one is absorbed (all zero)
_ESTIMABLE_TOL = 1e-6
_COND_LIMIT = 1e8  # scaled Gram matrices better than this are solved by Cholesky, others by QR
FEW_SESSIONS = 30  # below this, cluster-robust SEs are known to be unreliable


@dataclass(frozen=True)
class Effect:
    """One estimate with its cluster-robust SE, 95% CI and two-sided t p-value (NaN: not identified)."""

    estimate: float
    se: float
    ci_low: float
    ci_high: float
    p_value: float

    @property
    def identified(self) -> bool:
        return math.isfinite(self.estimate)


NAN_EFFECT = Effect(math.nan, math.nan, math.nan, math.nan, math.nan)


class WaldTest(NamedTuple):
    """Joint test that all slot effects are zero: F = W/df1 on (df1, df2) degrees of freedom."""

    statistic: float
    df1: int
    df2: int
    p_value: float


@dataclass
class JointFit:
    severity: dict[str, Effect]  # reviewer -> points vs the average reviewer (of its group)
    quality: dict[str, Effect]  # candidate model -> points vs the average model (of its group)
    slot_effects: dict[int, Effect]  # display slot -> points vs the average slot
    position_test: WaldTest | None  # all slot effects zero; None without slot effects
    length_per_log: Effect | None  # points per unit of log(chars + 1), within model
    length_per_sd: Effect | None  # points per sample SD of log length (SD treated as fixed)
    self_preference: Effect | None  # unweighted mean of the identified per-reviewer terms
    self_preference_by_reviewer: dict[str, Effect]
    residual_sd_by_reviewer: dict[str, float]
    residuals: np.ndarray  # aligned with the data; NaN for records the fit could not use
    n_sessions: int  # sessions used (with >= 2 records) = clusters G
    n_records: int  # records used = N
    df: int  # degrees of freedom of every t / F denominator: G - 1
    warnings: list[str] = field(default_factory=list)
    groups: list[tuple[list[str], list[str]]] = field(default_factory=list)  # (reviewers, models) per group
    not_identified: list[str] = field(default_factory=list)  # effects reported as NaN / None


# --------------------------------------------------------------------------- public entry


def fit(data: ScoreData) -> JointFit:
    """Fit the joint model; never raises on thin or degenerate data (warnings instead)."""
    warnings: list[str] = []
    n_all = data.n_records
    residuals = np.full(n_all, np.nan)
    if n_all == 0:
        warnings.append("joint model: no records, nothing to estimate")
        return _empty(data, warnings, residuals, np.zeros(0, dtype=bool))

    session = np.asarray(data.session, dtype=np.int64)
    counts = np.bincount(session)
    use = counts[session] >= 2
    if not use.any() or len(np.unique(session[use])) < 2:
        warnings.append(f"joint model: too little data ({int((counts >= 2).sum())} session(s) with at least two "
                        "records; need at least 2) - no effects estimated")
        return _empty(data, warnings, residuals, use)

    _, sess = np.unique(session[use], return_inverse=True)
    rev = np.asarray(data.reviewer, dtype=np.int64)[use]
    mod = np.asarray(data.model, dtype=np.int64)[use]
    slot = np.asarray(data.slot, dtype=np.int64)[use]
    log_len = np.asarray(data.log_length, dtype=np.float64)[use]
    y = np.asarray(data.score, dtype=np.float64)[use]
    own = np.asarray(data.self_review, dtype=bool)[use]
    n = len(y)
    n_sessions = int(sess.max()) + 1
    size = np.bincount(sess, minlength=n_sessions).astype(np.float64)

    design = _Design.build(data, rev, mod, slot, log_len, own, warnings)
    x_raw = design.matrix
    x = _demean(x_raw, sess, size)
    yt = _demean(y, sess, size)

    solved = _solve(x, x_raw, yt, design.factor_columns)
    p = len(solved.keep)
    resid_df = n - n_sessions - p
    if p == 0 or resid_df < 1:
        why = ("nothing varies within sessions" if p == 0
               else f"{n} records in {n_sessions} sessions for {p} parameters plus the session effects")
        warnings.append(f"joint model: too little data ({why}) - no effects estimated")
        return _empty(data, warnings, residuals, use, design)

    xs, e = solved.xs, solved.residuals
    scores = np.empty((n_sessions, p))
    for j in range(p):  # P columns, not a per-session loop
        scores[:, j] = np.bincount(sess, weights=xs[:, j] * e, minlength=n_sessions)
    factor = n_sessions / (n_sessions - 1) * (n - 1) / (n - p)
    cov_scaled = factor * solved.gram_inv @ (scores.T @ scores) @ solved.gram_inv

    n_cols = x.shape[1]
    keep, scale = solved.keep, solved.scale[solved.keep]
    beta = np.zeros(n_cols)
    beta[keep] = solved.beta_scaled / scale
    cov = np.zeros((n_cols, n_cols))
    cov[np.ix_(keep, keep)] = cov_scaled / np.outer(scale, scale)
    inference = _Inference(beta, cov, solved.null, solved.removed, n_sessions - 1)

    used = np.flatnonzero(use)
    residuals[used] = e
    leverage = 1.0 / size[sess] + ((xs @ solved.gram_inv) * xs).sum(axis=1)
    result = design.report(inference, data, warnings)
    result.residuals = residuals
    result.residual_sd_by_reviewer = _scale_use(data, rev, e, leverage)
    result.n_sessions, result.n_records, result.df = n_sessions, n, n_sessions - 1
    if n_sessions < FEW_SESSIONS:
        warnings.append(f"joint model: only {n_sessions} sessions - cluster-robust standard errors and p-values "
                        f"are unreliable with fewer than about {FEW_SESSIONS}")
    result.warnings = warnings
    return result


# --------------------------------------------------------------------------- design


@dataclass
class _Design:
    """The un-demeaned regressors and, per reported effect, its contrast over the columns."""

    matrix: np.ndarray  # N x P_all
    rev_codes: np.ndarray  # R x P_all: severity of reviewer r = rev_codes[r] @ beta
    mod_codes: np.ndarray  # M x P_all
    slot_codes: np.ndarray  # K x P_all, rows for ``slots``
    slots: list[int]
    self_cols: dict[int, int]  # reviewer index -> column
    length_col: int
    factor_columns: int  # columns before this one code reviewers, models and slots
    groups: list[tuple[list[int], list[int]]]
    alone: set[tuple[str, int]]  # ("reviewer"|"model", index) alone in its group: nothing to compare

    @staticmethod
    def build(data: ScoreData, rev, mod, slot, log_len, own, warnings: list[str]) -> _Design:
        n_rev, n_mod = len(data.reviewers), len(data.models)
        groups = _groups(rev, mod, n_rev, n_mod)
        rev_e, rev_alone = _effect_codes([g[0] for g in groups], n_rev)
        mod_e, mod_alone = _effect_codes([g[1] for g in groups], n_mod)
        alone = {("reviewer", i) for i in rev_alone} | {("model", i) for i in mod_alone}

        slots = sorted(np.unique(slot[slot >= 0]).tolist())
        slot_e, _ = _effect_codes([slots] if len(slots) > 1 else [], max(slots, default=-1) + 2)
        slot_e[-1] = 0.0  # the extra last row: slot -1, the average slot
        slot_rows = np.where(slot >= 0, slot, slot_e.shape[0] - 1)

        group_of = np.zeros(n_rev, dtype=np.int64)
        for number, (reviewers, _) in enumerate(groups):
            group_of[reviewers] = number
        group_e = np.zeros((n_rev, max(len(groups) - 1, 0)))
        for number in range(1, len(groups)):
            group_e[group_of == number, number - 1] = 1.0

        self_reviewers = sorted(np.unique(rev[own]).tolist())
        self_x = np.column_stack([(own & (rev == r)).astype(np.float64) for r in self_reviewers]) \
            if self_reviewers else np.zeros((len(rev), 0))

        blocks = [rev_e[rev], mod_e[mod], slot_e[slot_rows], group_e[rev], self_x, log_len[:, None]]
        widths = [b.shape[1] for b in blocks]
        starts = np.concatenate([[0], np.cumsum(widths)])
        total = int(starts[-1])

        def embed(codes: np.ndarray, block: int) -> np.ndarray:
            out = np.zeros((codes.shape[0], total))
            out[:, starts[block]:starts[block + 1]] = codes
            return out

        slot_codes = embed(slot_e[slots], 2) if slots else np.zeros((0, total))
        design = _Design(
            matrix=np.hstack(blocks), rev_codes=embed(rev_e, 0), mod_codes=embed(mod_e, 1),
            slot_codes=slot_codes, slots=slots,
            self_cols={r: int(starts[4]) + i for i, r in enumerate(self_reviewers)},
            length_col=int(starts[5]), factor_columns=int(starts[3]), groups=groups, alone=alone,
        )
        design._design_warnings(data, rev, mod, slot, own, warnings)
        return design

    def _design_warnings(self, data: ScoreData, rev, mod, slot, own, warnings: list[str]) -> None:
        if not own.any():
            warnings.append("no self-reviews (no reviewer scored its own model's answer): self-preference is "
                            "not identified")
        if not self.slots:
            warnings.append("no display-order records (position is not a display slot before schema 1.2.0): "
                            "position effects are not estimated")
        elif len(self.slots) == 1:
            warnings.append(f"every answer was shown in display slot {self.slots[0]}: position effects are not "
                            "estimated")
        else:
            shown = slot >= 0
            pairs = np.unique(mod[shown] * (max(self.slots) + 1) + slot[shown])
            pair_model, pair_slot = np.divmod(pairs, max(self.slots) + 1)
            per_model = np.bincount(pair_model, minlength=len(data.models))
            for m in np.flatnonzero(per_model == 1).tolist():
                s = int(pair_slot[pair_model == m][0])
                warnings.append(f"candidate {data.models[m]} was always shown in display slot {s}: its quality "
                                f"and the slot {s} position effect cannot be separated from its own scores")
        if len(self.groups) > 1:
            described = "; ".join(
                f"group {i + 1}: reviewers {', '.join(data.reviewers[r] for r in g[0])} / "
                f"candidates {', '.join(data.models[m] for m in g[1])}" for i, g in enumerate(self.groups))
            warnings.append(f"reviewers and candidates are not connected ({len(self.groups)} separate groups: "
                            f"no reviewer scored candidates of another group). Severities and qualities are "
                            f"relative to the average within their group and are only comparable within a group "
                            f"- {described}")
        for kind, index in sorted(self.alone):
            name = data.reviewers[index] if kind == "reviewer" else data.models[index]
            what = "severity" if kind == "reviewer" else "quality"
            other = "reviewer" if kind == "reviewer" else "candidate"
            warnings.append(f"{kind} {name} is the only {other} in its group: its {what} has nothing to be "
                            "compared with and is not estimated")

    def report(self, inf: _Inference, data: ScoreData, warnings: list[str]) -> JointFit:
        missing: list[str] = []

        def named(codes: np.ndarray, index: int, kind: str, label: str) -> Effect:
            if (kind, index) in self.alone:
                return NAN_EFFECT
            effect = inf.effect(codes[index])
            if not effect.identified:
                missing.append(label)
            return effect

        present_rev = sorted({r for g in self.groups for r in g[0]})
        present_mod = sorted({m for g in self.groups for m in g[1]})
        severity = {data.reviewers[r]: named(self.rev_codes, r, "reviewer", f"severity of {data.reviewers[r]}")
                    for r in present_rev}
        quality = {data.models[m]: named(self.mod_codes, m, "model", f"quality of {data.models[m]}")
                   for m in present_mod}
        slot_effects = {s: named(self.slot_codes, i, "slot", f"display slot {s} effect")
                        for i, s in enumerate(self.slots)}
        position_test = inf.wald(self.slot_codes) if len(self.slots) > 1 else None
        if len(self.slots) > 1 and position_test is None:
            missing.append("position bias test")

        n_cols = len(inf.beta)
        by_reviewer: dict[str, Effect] = {}
        pooled_rows = []
        for r, col in self.self_cols.items():
            unit = np.zeros(n_cols)
            unit[col] = 1.0
            effect = inf.effect(unit)
            by_reviewer[data.reviewers[r]] = effect
            if effect.identified:
                pooled_rows.append(unit)
            else:
                missing.append(f"self-preference of {data.reviewers[r]}")
        self_preference = inf.effect(np.mean(pooled_rows, axis=0)) if pooled_rows else None
        if self.self_cols and self_preference is None:
            missing.append("pooled self-preference")

        unit = np.zeros(n_cols)
        unit[self.length_col] = 1.0
        length_per_log: Effect | None = inf.effect(unit)
        length_per_sd = None
        if length_per_log.identified:
            sd = log_length_sd(data)
            length_per_sd = Effect(length_per_log.estimate * sd, length_per_log.se * sd,
                                   length_per_log.ci_low * sd, length_per_log.ci_high * sd, length_per_log.p_value)
        else:
            length_per_log = None
            missing.append("length effect (answer length does not vary within model and session)")

        if missing:
            warnings.append("not identified by this design (confounded with other terms; reported as missing): "
                            + "; ".join(missing))
        return JointFit(
            severity=severity, quality=quality, slot_effects=slot_effects, position_test=position_test,
            length_per_log=length_per_log, length_per_sd=length_per_sd, self_preference=self_preference,
            self_preference_by_reviewer=by_reviewer, residual_sd_by_reviewer={}, residuals=np.zeros(0),
            n_sessions=0, n_records=0, df=0, warnings=warnings,
            groups=[([data.reviewers[r] for r in g[0]], [data.models[m] for m in g[1]]) for g in self.groups],
            not_identified=missing,
        )


def _groups(rev: np.ndarray, mod: np.ndarray, n_rev: int, n_mod: int) -> list[tuple[list[int], list[int]]]:
    """Connected components of the reviewer-candidate graph (an edge: the reviewer scored the model)."""
    parent = list(range(n_rev + n_mod))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    pairs = np.unique(rev * n_mod + mod)
    for pair in pairs.tolist():
        a, b = find(pair // n_mod), find(n_rev + pair % n_mod)
        if a != b:
            parent[b] = a
    members: dict[int, tuple[list[int], list[int]]] = {}
    for r in np.unique(rev).tolist():
        members.setdefault(find(r), ([], []))[0].append(r)
    for m in np.unique(mod).tolist():
        members.setdefault(find(n_rev + m), ([], []))[1].append(m)
    return sorted(members.values(), key=lambda g: g[0][0])


def _effect_codes(groups: list[list[int]], n_levels: int) -> tuple[np.ndarray, list[int]]:
    """Sum-to-zero coding within each group: level -> row of codes; the last level of a group is
    minus the sum of the others. Levels alone in their group get no column."""
    width = sum(len(g) - 1 for g in groups if len(g) > 1)
    codes = np.zeros((n_levels, width))
    alone = []
    col = 0
    for g in groups:
        if len(g) < 2:
            alone.extend(g)
            continue
        k = len(g) - 1
        codes[g[:-1], np.arange(col, col + k)] = 1.0
        codes[g[-1], col:col + k] = -1.0
        col += k
    return codes, alone


# --------------------------------------------------------------------------- linear algebra


def _demean(a: np.ndarray, sess: np.ndarray, size: np.ndarray) -> np.ndarray:
    n_sessions = len(size)
    if a.ndim == 1:
        return a - (np.bincount(sess, weights=a, minlength=n_sessions) / size)[sess]
    means = np.empty((n_sessions, a.shape[1]))
    for j in range(a.shape[1]):
        means[:, j] = np.bincount(sess, weights=a[:, j], minlength=n_sessions)
    return a - (means / size[:, None])[sess]


@dataclass
class _Solved:
    keep: list[int]  # columns estimated, in order
    scale: np.ndarray  # P_all: column norms (1 for absorbed columns)
    xs: np.ndarray  # N x P: the kept columns of the demeaned design, scaled to unit norm
    beta_scaled: np.ndarray  # P: coefficients of the scaled columns
    gram_inv: np.ndarray  # P x P: (xs'xs)^-1
    residuals: np.ndarray  # N
    null: np.ndarray  # P_all x d orthonormal basis left by dropped factor columns
    removed: np.ndarray  # P_all bool: dropped non-factor columns (their effect taken as zero)


def _solve(x: np.ndarray, x_raw: np.ndarray, y: np.ndarray, factor_cols: int) -> _Solved:
    """Least squares on the demeaned design, after a rank check in column priority order.

    Columns are scaled to unit norm and the Gram matrix is formed in one pass over the data;
    the rank check is a sequential Cholesky on it (a column is dropped when its residual after
    projection on the columns kept before it has squared relative norm <= 1e-10, i.e. it is
    explained to 1 part in 1e5). The solution uses the Cholesky factor plus one step of
    iterative refinement when the scaled Gram matrix is well conditioned (cond < 1e8: the
    normal equations lose at most half the digits and the refinement recovers them; dummy-coded
    designs are far better than that) and Householder QR (lstsq) otherwise. Few passes over
    the data keep it fast even when a threaded BLAS is slowed down by a busy machine.
    """
    n, p_all = x.shape
    norm = np.sqrt(np.einsum("ij,ij->j", x, x))
    raw = np.sqrt(np.einsum("ij,ij->j", x_raw, x_raw))
    live = np.isfinite(norm) & (norm > _ZERO_TOL * np.maximum(raw, 1.0))
    scale = np.where(live, norm, 1.0)
    scaled = x / scale
    gram = scaled.T @ scaled
    keep: list[int] = []
    fitted: dict[int, tuple[np.ndarray, list[int]]] = {}  # dropped column -> its fit on earlier kept ones
    for j in range(p_all):
        if not live[j]:
            continue
        if keep:
            c = np.linalg.solve(gram[np.ix_(keep, keep)], gram[keep, j])
            rest = gram[j, j] - gram[keep, j] @ c
        else:
            c, rest = np.zeros(0), gram[j, j]
        if rest > _RANK_TOL:
            keep.append(j)
        else:
            fitted[j] = (c, list(keep))
    removed = np.array([j >= factor_cols and j not in keep for j in range(p_all)], dtype=bool)
    if not keep:
        return _Solved(keep, scale, np.zeros((n, 0)), np.zeros(0), np.zeros((0, 0)), y.copy(),
                       np.zeros((p_all, 0)), removed)

    xs = scaled[:, keep]
    gk = gram[np.ix_(keep, keep)]
    if np.linalg.cond(gk) < _COND_LIMIT:
        # Well conditioned (checked above) and at most a few dozen columns: the inverse is exact
        # enough, and numpy's suffices (scipy.linalg would add ~0.2 s to every report's start-up).
        gram_inv = np.linalg.inv(gk)
        beta = gram_inv @ (xs.T @ y)
        beta = beta + gram_inv @ (xs.T @ (y - xs @ beta))
    else:
        beta = np.linalg.lstsq(xs, y, rcond=None)[0]
        r_inv = np.linalg.inv(np.linalg.qr(xs, mode="r"))
        gram_inv = r_inv @ r_inv.T

    vectors = []
    for j in range(factor_cols):
        if j in keep:
            continue
        v = np.zeros(p_all)
        v[j] = 1.0
        if j in fitted:  # x_j = sum_k (scale_j c_k / scale_k) x_k over the columns kept before j
            c, before = fitted[j]
            v[before] = -scale[j] * c / scale[before]
        vectors.append(v)
    null = np.linalg.qr(np.column_stack(vectors))[0] if vectors else np.zeros((p_all, 0))
    return _Solved(keep, scale, xs, beta, gram_inv, y - xs @ beta, null, removed)


class _Inference:
    """Estimates, t inference on G-1 df and estimability of linear contrasts of the coefficients."""

    def __init__(self, beta: np.ndarray, cov: np.ndarray, null: np.ndarray, removed: np.ndarray,
                 df: int) -> None:
        self.beta, self.cov, self.null, self.removed, self.df = beta, cov, null, removed, df
        self.crit = float(special.stdtrit(df, 0.975))

    def estimable(self, contrast: np.ndarray) -> bool:
        if np.any(contrast[self.removed] != 0):
            return False
        scale = max(float(np.linalg.norm(contrast)), 1.0)
        return float(np.linalg.norm(self.null.T @ contrast)) <= _ESTIMABLE_TOL * scale

    def effect(self, contrast: np.ndarray) -> Effect:
        if not self.estimable(contrast):
            return NAN_EFFECT
        estimate = float(contrast @ self.beta)
        se = math.sqrt(max(float(contrast @ self.cov @ contrast), 0.0))
        if se > 0:
            p_value = float(2.0 * special.stdtr(self.df, -abs(estimate) / se))
        else:
            p_value = math.nan
        return Effect(estimate, se, estimate - self.crit * se, estimate + self.crit * se, p_value)

    def wald(self, contrasts: np.ndarray) -> WaldTest | None:
        """H0: every row's contrast is zero, on the identified part of the rows' span."""
        if self.null.shape[1]:
            # combinations a with contrasts.T @ a orthogonal to the null space
            m = self.null.T @ contrasts.T
            _, s, vt = np.linalg.svd(m)
            rank = int((s > _ESTIMABLE_TOL * max(1.0, s.max(initial=0.0))).sum())
            contrasts = vt[rank:] @ contrasts
        if contrasts.shape[0] == 0:
            return None
        _, s, vt = np.linalg.svd(contrasts, full_matrices=False)
        q = int((s > _ESTIMABLE_TOL * max(1.0, s.max(initial=0.0))).sum())
        if q == 0:
            return None
        b = vt[:q]
        value = b @ self.beta
        middle = b @ self.cov @ b.T
        inverse = np.linalg.pinv(middle)
        statistic = float(value @ inverse @ value) / q
        p_value = float(special.fdtrc(q, self.df, statistic)) if math.isfinite(statistic) else math.nan
        return WaldTest(statistic, q, self.df, p_value)


def _scale_use(data: ScoreData, rev: np.ndarray, e: np.ndarray, leverage: np.ndarray) -> dict[str, float]:
    n_rev = len(data.reviewers)
    rss = np.bincount(rev, weights=e * e, minlength=n_rev)
    dof = np.bincount(rev, weights=1.0 - leverage, minlength=n_rev)
    present = np.bincount(rev, minlength=n_rev) > 0
    return {data.reviewers[r]: (math.sqrt(rss[r] / dof[r]) if dof[r] > 1e-9 else math.nan)
            for r in np.flatnonzero(present).tolist()}


def _empty(data: ScoreData, warnings: list[str], residuals: np.ndarray, use: np.ndarray,
           design: _Design | None = None) -> JointFit:
    """A fit with every effect missing, for data too thin to estimate anything."""
    reviewers = sorted(set(np.asarray(data.reviewer).tolist()))
    models = sorted(set(np.asarray(data.model).tolist()))
    slots = design.slots if design is not None else []
    return JointFit(
        severity={data.reviewers[r]: NAN_EFFECT for r in reviewers},
        quality={data.models[m]: NAN_EFFECT for m in models},
        slot_effects={s: NAN_EFFECT for s in slots},
        position_test=None, length_per_log=None, length_per_sd=None, self_preference=None,
        self_preference_by_reviewer={}, residual_sd_by_reviewer={data.reviewers[r]: math.nan for r in reviewers},
        residuals=residuals, n_sessions=int(len(np.unique(np.asarray(data.session)[use]))) if use.any() else 0,
        n_records=int(use.sum()), df=0, warnings=warnings,
        groups=[], not_identified=["every effect"],
    )
