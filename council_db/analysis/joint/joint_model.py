"""One joint model for every effect that raw means would confound.

    score ~ session + candidate model + reviewer severity + display slot
            + log length (a common slope + each reviewer's deviation) + self-review (one term per reviewer)

Raw reviewer means mix a reviewer's severity with *what* it reviewed (a reviewer that never
sees its own strong answer looks harsh); raw length slopes mix verbosity with *which* models
write long answers. Fitting everything at once, with a fixed effect per session and the
candidate model in the model, separates them.

Method
------
* Session fixed effects are absorbed by demeaning the score and every regressor within session
  (``np.bincount``; no per-session loop). Sessions with a single record carry no within-session
  information: they are left out (as reghdfe does); their residual is NaN.
* A design that fixes each reviewer's total in a session (pairwise verdicts, rankings:
  ``fixed_totals``) gets a fixed effect per (session, reviewer) instead: the totals carry no
  information, and an effect that lives only in them (reviewer severity) is then absorbed
  and reported as not identified, never estimated from floating-point noise. Clusters stay
  sessions.
* Effect coding, so numbers read naturally: reviewer severity is relative to the average
  reviewer (unweighted, sums to zero; negative = harsh), candidate quality relative to the
  average candidate, slot effects relative to the average display slot. Records whose position
  is not a display slot (slot == -1, schema < 1.2.0) get 0 in every slot column: they are taken
  to sit at the average slot and still inform every other effect.
* Self-preference: one term per reviewer that has self-reviews; the pooled self-preference is
  the unweighted mean of the identified reviewer terms (a linear contrast, with its SE).
* Length: log(chars + 1) centred within its session (over the known lengths), *within
  candidate model* (model effects are in the model), per unit of log length, as one common
  slope on every record plus, for the k reviewers whose answers' lengths vary within some
  session of their own, effect-coded deviations from it (sum to zero over those k: k - 1
  columns; none for k <= 1). Each such reviewer's slope (``length_by_reviewer``) is a contrast,
  the common slope plus its deviation (the last one's: the common less the others'); the
  panel's length effect (``length_per_log``) is the common slope, the unweighted mean of those
  reviewers' slopes. Why a slope per reviewer: where judges differ in their taste for length
  and each model writes its own typical length, a judge's length preference moves its scores
  of its own answers exactly as a self-preference does, and one panel slope left that in the
  self-preference terms (bench_bayes's design: the pooled self-preference's 95% CI covered
  85-92%; docs/methods.md). Why the common slope: a reviewer scoring one answer a session has
  no longer and shorter answer of its own to compare and gets no slope (named not
  identified); it is taken at the panel's, and its records inform that slope through the
  comparisons between reviewers within sessions. Where every reviewer has its own slope this
  is the same model as one column per reviewer (a reparametrisation); where none has, it is
  one slope for the panel. ``length_per_sd`` multiplies estimate, SE and CI by the sample SD
  of log length (``score_data.log_length_sd``), treating that SD as fixed (its own sampling
  error is ignored; p-value unchanged).
* OLS on the demeaned design, columns scaled to unit norm: Cholesky of the Gram matrix with one
  step of iterative refinement when it is well conditioned (in practice always, for these
  dummy-coded designs), Householder QR (lstsq) otherwise; see ``least_squares.solve``.
* Covariance: cluster-robust by session, CR1 with the small-sample factor
  ``G/(G-1) * (N-1)/(N-P)``, where G = sessions used, N = records used and P = estimated slope
  parameters. The session fixed effects are *not* counted in P:
  they are nested within the clusters, and counting them would overstate the correction
  enormously with many small sessions (Cameron & Miller 2015, sec. III.B; the xtreg-fe /
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
Cholesky in a fixed priority order: reviewers, models, slots, group offsets, self terms, the
common length slope, the length deviations) drops columns that the others already explain, so
self and length terms are the ones dropped when they cannot be told apart (a dropped self or
length term is taken as zero and named; a reviewer without a slope of its own is named too).
Reviewer, model and slot effects are then checked for estimability (orthogonal to the null
space their dropped columns leave);
one that is not identified is reported as an Effect of NaNs (dict entries) or None
(``length_*``, ``self_preference``), and
named in a warning.
"""

from __future__ import annotations

import math

import numpy as np

from council_db.analysis.joint.fixed_totals import fixed_totals
from council_db.analysis.joint.joint_design import Design, varied_lengths
from council_db.analysis.joint.joint_fit import JointFit, centred_where_known, per_sd, rounding_noise_removed, scale_use
from council_db.analysis.joint.least_squares import NAN_EFFECT, Effect, Inference, demean, solve
from council_db.analysis.joint.residual_means import ResidualProjection
from council_db.analysis.loading.score_data import ScoreData, known_lengths, log_length_sd
from council_db.analysis.stats.small_sample import CR2
from council_db.analysis.stats.unique_rows import distinct

FEW_SESSIONS = 30  # below this, CR1 SEs are unreliable and any interval is wide
# Reviewers + candidates past which the fit absorbs them: the dense fit's traced peak is ~130 MB
# at 1,004 columns (3,000 records) and ~300 MB at 1,504 (benchmarks/bench_absorb.py)
DENSE_COLUMNS = 1_100


# --------------------------------------------------------------------------- public entry


def fit(data: ScoreData, absorbed: bool | None = None) -> JointFit:
    """Fit the joint model; never raises on thin or degenerate data (warnings instead). A panel
    of more than DENSE_COLUMNS reviewers and candidates (or ``absorbed=True``) is fitted with
    those factors absorbed (absorbed_fit), its design never made dense."""
    warnings: list[str] = []
    n_all = data.n_records
    residuals = np.full(n_all, np.nan)
    if n_all == 0:
        warnings.append("joint model: no records, nothing to estimate")
        return _empty(data, warnings, residuals, np.zeros(0, dtype=bool))

    session = np.asarray(data.session, dtype=np.int64)
    counts = np.bincount(session)
    fixed = fixed_totals(data)
    units = session if fixed is None else fixed.group  # what the fixed effects are for
    use = np.bincount(units)[units] >= 2
    if not use.any() or len(distinct(session[use])) < 2:
        warnings.append(f"joint model: too little data ({int((counts >= 2).sum())} session(s) with at least two "
                        "records; need at least 2) - no effects estimated")
        return _empty(data, warnings, residuals, use)
    if fixed is not None:
        warnings.append(f"{fixed.reason()}, so they carry no information: the joint model compares the answers "
                        "within each reviewer's scores of a session, and reviewer severity, which lives only in "
                        "those totals, is not identified")
    if absorbed or (absorbed is None and is_wide(data, use)):
        from council_db.analysis.joint import absorbed_fit  # loaded by a wide panel's report alone

        return absorbed_fit.fit(data, use, fixed, warnings)

    _, sess = np.unique(session[use], return_inverse=True)  # the clusters
    _, unit = np.unique(units[use], return_inverse=True)
    rev = np.asarray(data.reviewer, dtype=np.int64)[use]
    mod = np.asarray(data.model, dtype=np.int64)[use]
    slot = np.asarray(data.slot, dtype=np.int64)[use]
    log_len = np.asarray(data.log_length, dtype=np.float64)[use]
    sized = ~np.isnan(log_len)
    log_len = centred_where_known(log_len, sized, unit)
    y = np.asarray(data.score, dtype=np.float64)[use]
    own = np.asarray(data.self_review, dtype=bool)[use]
    n = len(y)
    n_sessions = int(sess.max()) + 1
    size = np.bincount(unit).astype(np.float64)

    length_reviewers = varied_lengths(rev, log_len, sized, unit, len(data.reviewers)) if sized.any() else []
    design = Design.build(data, rev, mod, slot, log_len, own, length_reviewers, warnings)
    x_raw = design.matrix
    x = demean(x_raw, unit, size)
    yt = demean(y, unit, size)

    solved = solve(x, x_raw, yt, design.factor_columns)
    p = len(solved.keep)
    resid_df = n - len(size) - p
    if p == 0 or resid_df < 1:
        why = ("nothing varies within sessions" if p == 0
               else f"{n} records in {len(size)} groups for {p} parameters plus the fixed effects")
        warnings.append(f"joint model: too little data ({why}) - no effects estimated")
        return _empty(data, warnings, residuals, use, design)

    xs, e = solved.xs, rounding_noise_removed(solved.residuals, y)
    n_cols = x.shape[1]
    keep, scale = solved.keep, solved.scale[solved.keep]
    small = CR2.fit(xs, e, sess, n_sessions, solved.gram_inv)
    if small is not None:
        cov_scaled = small.cov
    else:
        scores = np.empty((n_sessions, p))
        for j in range(p):  # P columns, not a per-session loop
            scores[:, j] = np.bincount(sess, weights=xs[:, j] * e, minlength=n_sessions)
        factor = n_sessions / (n_sessions - 1) * (n - 1) / (n - p)
        cov_scaled = factor * solved.gram_inv @ (scores.T @ scores) @ solved.gram_inv
    beta = np.zeros(n_cols)
    beta[keep] = solved.beta_scaled / scale
    cov = np.zeros((n_cols, n_cols))
    cov[np.ix_(keep, keep)] = cov_scaled / np.outer(scale, scale)
    inference = Inference(beta, cov, solved.null, solved.removed, n_sessions - 1,
                          None if small is None else lambda rows: small.df(rows[:, keep] / scale),
                          None if small is None else lambda rows: small.single_dfs(rows[:, keep] / scale))

    used = np.flatnonzero(use)
    residuals[used] = e
    leverage = 1.0 / size[unit] + ((xs @ solved.gram_inv) * xs).sum(axis=1)
    result = _result(design, inference, data, warnings)
    result.residuals = residuals
    result.residual_sd_by_reviewer = scale_use(data, rev, e, leverage)
    result.n_sessions, result.n_records, result.df = n_sessions, n, n_sessions - 1
    result.fixed_totals = fixed
    result.projection = ResidualProjection(np.flatnonzero(use), session[use], xs, solved.gram_inv, e)
    if n_sessions < FEW_SESSIONS:
        how = ("small-sample corrected (CR2, Bell-McCaffrey degrees of freedom), but intervals are wide"
               if small is not None else "unreliable")
        warnings.append(f"joint model: only {n_sessions} sessions - cluster-robust standard errors and p-values "
                        f"are {how} with fewer than about {FEW_SESSIONS}")
    result.warnings = warnings
    return result


def is_wide(data: ScoreData, use: np.ndarray) -> bool:
    """Whether the panel the records ``use`` marks is too wide for the dense fit."""
    reviewers = len(distinct(np.asarray(data.reviewer)[use]))
    return reviewers + len(distinct(np.asarray(data.model)[use])) > DENSE_COLUMNS


def _result(design: Design, inf: Inference, data: ScoreData, warnings: list[str]) -> JointFit:
    """Every reported effect from its contrast, and the warnings for those not identified."""
    missing: list[str] = []

    def named(codes: np.ndarray, indices: list[int], kind: str, labels: list[str]) -> list[Effect]:
        """The effects of these rows of ``codes`` (NaN for a level alone in its group)."""
        asked = [i for i in indices if (kind, i) not in design.alone]
        found = dict(zip(asked, inf.effects(codes[asked])))
        missing.extend(label for i, label in zip(indices, labels) if i in found and not found[i].identified)
        return [found.get(i, NAN_EFFECT) for i in indices]

    present_rev = sorted({r for g in design.groups for r in g[0]})
    present_mod = sorted({m for g in design.groups for m in g[1]})
    rev_names, mod_names = [data.reviewers[r] for r in present_rev], [data.models[m] for m in present_mod]
    severity = dict(zip(rev_names, named(design.rev_codes, present_rev, "reviewer",
                                         [f"severity of {name}" for name in rev_names])))
    quality = dict(zip(mod_names, named(design.mod_codes, present_mod, "model",
                                        [f"quality of {name}" for name in mod_names])))
    slot_effects = dict(zip(design.slots, named(design.slot_codes, list(range(len(design.slots))), "slot",
                                                [f"display slot {s} effect" for s in design.slots])))
    position_test = inf.wald(design.slot_codes) if len(design.slots) > 1 else None
    if len(design.slots) > 1 and position_test is None:
        missing.append("position bias test")

    n_cols = len(inf.beta)
    by_reviewer, pooled = _per_reviewer(inf, design.self_cols, n_cols, data)
    missing.extend(f"self-preference of {name}" for name, e in by_reviewer.items() if not e.identified)
    self_preference = None if pooled is None else inf.effect(pooled)
    if design.self_cols and self_preference is None:
        missing.append("pooled self-preference")

    common = np.zeros(n_cols)
    common[design.length_col] = 1.0
    length_per_log: Effect | None = inf.effect(common)  # the panel's slope
    if not length_per_log.identified:
        length_per_log = None
    length_per_sd = None if length_per_log is None else per_sd(length_per_log, log_length_sd(data))
    length_by_reviewer = {data.reviewers[r]: e for r, e in zip(design.length_reviewers,
                                                                inf.effects(design.length_codes))}
    if not known_lengths(data).any():
        missing.append("length effect (no answer length is known)")
    else:
        missing.extend(f"length effect of {name} (answer length does not vary within model and session)"
                       for name, e in length_by_reviewer.items() if not e.identified)
        own_slope = set(design.length_reviewers)
        missing.extend(_without_length(data, [r for r in present_rev if r not in own_slope]))
        if length_per_log is None:
            missing.append("length effect (answer length does not vary within model and session)")

    if missing:
        warnings.append("not identified by this design (confounded with other terms; reported as missing): "
                        + "; ".join(missing))
    return JointFit(
        severity=severity, quality=quality, slot_effects=slot_effects, position_test=position_test,
        length_per_log=length_per_log, length_per_sd=length_per_sd, length_by_reviewer=length_by_reviewer,
        self_preference=self_preference,
        self_preference_by_reviewer=by_reviewer, residual_sd_by_reviewer={}, residuals=np.zeros(0),
        n_sessions=0, n_records=0, df=0, warnings=warnings,
        groups=[([data.reviewers[r] for r in g[0]], [data.models[m] for m in g[1]]) for g in design.groups],
        not_identified=missing,
    )


def _without_length(data: ScoreData, reviewers: list[int], named: int = 5) -> list[str]:
    """The reviewers without a slope of their own (taken at the panel's), each named where there
    are a few, else counted with the first few named (a panel of hundreds, each scoring one
    answer a session, would otherwise fill the warning with one entry per reviewer)."""
    why = "answers' lengths do not vary within {} sessions; taken at the panel's slope"
    if len(reviewers) <= named:
        return [f"length effect of {data.reviewers[r]} (its {why.format('its')})" for r in reviewers]
    first = ", ".join(data.reviewers[r] for r in reviewers[:named])
    return [f"length effect of {len(reviewers):,} reviewers ({first} and {len(reviewers) - named:,} more: "
            f"their {why.format('their')})"]


def _per_reviewer(inf: Inference, columns: dict[int, int], n_cols: int,
                  data: ScoreData) -> tuple[dict[str, Effect], np.ndarray | None]:
    """Each reviewer's self term (its column's coefficient), and the contrast of the pooled
    figure: the unweighted mean of the identified terms (None: none is)."""
    rows = np.zeros((len(columns), n_cols))
    rows[np.arange(len(columns)), list(columns.values())] = 1.0
    effects = inf.effects(rows)
    identified = np.array([e.identified for e in effects], dtype=bool)
    pooled = rows[identified].mean(axis=0) if identified.any() else None
    return {data.reviewers[r]: e for r, e in zip(columns, effects)}, pooled


def _empty(data: ScoreData, warnings: list[str], residuals: np.ndarray, use: np.ndarray,
           design: Design | None = None) -> JointFit:
    """A fit with every effect missing, for data too thin to estimate anything."""
    reviewers = sorted(set(np.asarray(data.reviewer).tolist()))
    models = sorted(set(np.asarray(data.model).tolist()))
    slots = design.slots if design is not None else []
    return JointFit(
        severity={data.reviewers[r]: NAN_EFFECT for r in reviewers},
        quality={data.models[m]: NAN_EFFECT for m in models},
        slot_effects={s: NAN_EFFECT for s in slots},
        position_test=None, length_per_log=None, length_per_sd=None, length_by_reviewer={}, self_preference=None,
        self_preference_by_reviewer={}, residual_sd_by_reviewer={data.reviewers[r]: math.nan for r in reviewers},
        residuals=residuals, n_sessions=int(len(distinct(np.asarray(data.session)[use]))) if use.any() else 0,
        n_records=int(use.sum()), df=0, warnings=warnings,
        groups=[], not_identified=["every effect"],
    )
