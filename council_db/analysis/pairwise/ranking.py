"""The Bradley-Terry ranking of a window: strengths, win rates, rank intervals, separability and
the slot and style coefficients, every interval from the same session resamples.

Strengths are on the logit scale: a difference of 1 means odds e = 2.7 of winning. They are
centred (sum to zero) or, with a baseline, the baseline's is 0. A win rate (ties half) is the
model's prediction for a game shown in neither order's favour and with no style difference:
against the baseline, or against a candidate of average strength. A rank interval holds the
2.5% and 97.5% quantiles of the candidate's rank over the resamples; separability is the share
of candidate pairs whose strength CIs do not overlap (Li et al. 2024's arena-hard measure).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from council_db.analysis.pairwise.bradley_terry import N_BOOT, RIDGE, Fit, design, fit, resampled_params
from council_db.analysis.pairwise.games import MARKDOWN, Games, keep_games
from council_db.analysis.stats import Estimate, percentile_interval, ranks_of_rows
from council_db.errors import CouncilDbError

STYLES = ("length", "markdown")
METHOD = "one-step session bootstrap, expanded percentile"
PRIOR = f"a normal prior with SD {1 / math.sqrt(RIDGE):g} on each centred strength and coefficient (logit scale)"
NO_MARKDOWN = "this window's answers carry no markdown counts; import with --from arena-hard --answers DIR, or " \
              "use --style length"


@dataclass(frozen=True)
class Standing:
    rank: int
    model: str
    strength: Estimate  # logit scale, centred or against the baseline
    win_rate: Estimate  # against the baseline or the average candidate, ties half
    rank_low: int | None
    rank_high: int | None
    games: int
    sessions: int
    never_lost: bool


@dataclass(frozen=True)
class Coefficient:
    name: str
    estimate: Estimate  # logit scale
    removes: str
    per_unit: Estimate | None = None  # a style coefficient per unit of its difference, not per SD


@dataclass(frozen=True)
class Ranking:
    outcome_model: str
    outcome_description: str
    standings: list[Standing]
    slot: list[Coefficient]  # pooled first, then per judge
    style: list[Coefficient]
    thresholds: list[Coefficient]
    separability: float
    baseline: str | None
    win_rate_against: str
    length_unit: str
    n_games: int
    n_sessions: int
    prior: str = PRIOR
    warnings: list[str] = field(default_factory=list)


def bradley_terry_ranking(games: Games, style: tuple[str, ...] = (), baseline: str | None = None,
                          n_boot: int = N_BOOT, seed: int = 0, strong_as_three: bool = False) -> Ranking:
    """The candidates of ``games`` ranked by their Bradley-Terry strength."""
    warnings = [f"{games.unpaired:,} records of two-answer sessions left out: no record of the other answer by the "
                "same reviewer to make a game with"] if games.unpaired else []
    columns, names, games = _style_columns(games, style, warnings)
    _check(games, baseline)
    held = games.models.index(baseline) if baseline is not None else None
    found = fit(design(games, columns, names, held, strong_as_three))
    samples = resampled_params(found, n_boot, seed)
    strengths, win_rates, centred, centred_boot = _candidates(found, samples, baseline is not None)
    if not found.converged:
        warnings.append(f"the fit did not converge in {found.steps} Newton steps: the strengths are not to be trusted")
    warnings.extend(_separation_warnings(games, found))
    return Ranking(
        outcome_model=found.design.model.name, outcome_description=found.design.model.description,
        standings=_standings(games, found, strengths, win_rates, centred_boot), slot=_slot(games, found, samples),
        style=_style(found, samples), thresholds=_threshold_estimates(found, samples),
        separability=_separability(centred), baseline=baseline,
        win_rate_against=f"the baseline {baseline}" if baseline else "a candidate of average strength",
        length_unit=games.length_unit, n_games=len(games), n_sessions=found.n_sessions, warnings=warnings)


def _check(games: Games, baseline: str | None) -> None:
    """One clear error for a window without games or a baseline that played none."""
    if len(games) == 0:
        raise CouncilDbError("no pairwise games in this window: it needs sessions where a reviewer judged two answers "
                             "(or scored several), see council-db stats")
    played = {games.models[m] for m in np.concatenate([games.first, games.second])}
    if baseline is not None and baseline not in played:
        raise CouncilDbError(f"--baseline {baseline!r} played no game in this window: give a candidate of its "
                             "games (see council-db leaderboard without --baseline)")


def _candidates(found: Fit, samples: np.ndarray,
                against_baseline: bool) -> tuple[list[Estimate], list[Estimate], list[Estimate], np.ndarray]:
    """Per candidate: its strength as shown (against the baseline, or centred), its win rate,
    its centred strength (what separability compares), and the centred resampled strengths."""
    theta, theta_boot = _strengths(found, found.params), _strengths(found, samples)
    centred, centred_boot = theta - theta.mean(), theta_boot - theta_boot.mean(axis=1, keepdims=True)
    shown, shown_boot = (theta, theta_boot) if against_baseline else (centred, centred_boot)
    held = found.design.held
    against, against_boot = (theta[held], theta_boot[:, held]) if against_baseline \
        else (theta.mean(), theta_boot.mean(axis=1))
    a, a_boot = _thresholds(found, found.params), _thresholds(found, samples)
    ordered = found.design.model.feasible_rows(a_boot)
    a_boot = np.where(ordered[:, None], a_boot, np.nan)  # a resample's step past a bound: no thresholds, no win rate
    win = found.design.model.expected(theta - against, a)
    win_boot = found.design.model.expected(theta_boot - against_boot[:, None], a_boot)
    g, k = found.n_sessions, len(theta)
    return ([_estimate(shown[j], shown_boot[:, j], g) for j in range(k)],
            [_estimate(win[j], win_boot[:, j], g) for j in range(k)],
            [_estimate(centred[j], centred_boot[:, j], g) for j in range(k)], centred_boot)


def _style_columns(games: Games, style: tuple[str, ...],
                   warnings: list[str]) -> tuple[np.ndarray | None, list[str], Games]:
    """The style covariates asked for, and only the games where they are known."""
    unknown = sorted(set(style) - set(STYLES))
    if unknown:
        raise CouncilDbError(f"--style {','.join(unknown)}: not a style covariate; give length, markdown or both "
                             "(length,markdown)")
    if not style:
        return None, [], games
    parts, names = [], []
    if "length" in style:
        parts.append(games.length_diff[:, None])
        names.append(f"length ({games.length_unit})")
    if "markdown" in style:
        if games.markdown_diff is None:
            raise CouncilDbError(NO_MARKDOWN)
        parts.append(games.markdown_diff)
        names.extend(MARKDOWN)
    columns = np.hstack(parts)
    known = np.isfinite(columns).all(axis=1)
    if len(games) and not known.any():
        raise CouncilDbError(f"--style {','.join(style)}: no game's answers have a known {' and '.join(style)}; "
                             "import with --answers DIR (the answers' texts), or leave --style out")
    if not known.all():
        warnings.append(f"{int((~known).sum()):,} of {len(games):,} games left out: their answers' "
                        f"{' or '.join(style)} is unknown")
    columns, games = columns[known], keep_games(games, known)
    varies = columns.std(axis=0) > 0 if len(columns) else np.zeros(len(names), dtype=bool)
    if not varies.all():
        constant = ", ".join(np.array(names)[~varies])
        warnings.append(f"no style difference between the answers of any game in {constant}: the covariate can "
                        "remove nothing and is left out")
    return columns[:, varies], [name for name, on in zip(names, varies) if on], games


def _strengths(found: Fit, params: np.ndarray) -> np.ndarray:
    """Every candidate's strength (the held one at 0) from parameter rows."""
    k = len(found.design.candidates)
    free = params[..., :k - 1]
    return np.insert(free, found.design.held, 0.0, axis=-1)


def _thresholds(found: Fit, params: np.ndarray) -> np.ndarray:
    return params[..., found.design.x.shape[1]:]


def _estimate(point: float, boot: np.ndarray, g: int) -> Estimate:
    low, high = percentile_interval(boot, n_sessions=g) if g >= 2 else (math.nan, math.nan)
    finite = boot[np.isfinite(boot)]
    se = float(np.std(finite, ddof=1)) if len(finite) > 1 else math.nan
    return Estimate(float(point), low, high, se, None, 0.95, g, METHOD)


def _standings(games: Games, found: Fit, strengths: list[Estimate], win_rates: list[Estimate],
               centred_boot: np.ndarray) -> list[Standing]:
    candidates = found.design.candidates
    ranks = ranks_of_rows(centred_boot)
    order = np.argsort([-s.estimate for s in strengths], kind="stable")
    played = np.concatenate([games.first, games.second])
    sessions = np.concatenate([games.session, games.session])
    out = []
    for place, j in enumerate(order.tolist(), start=1):
        model = candidates[j]
        interval = (int(np.quantile(ranks[:, j], 0.025, method="lower")),
                    int(np.quantile(ranks[:, j], 0.975, method="higher"))) if len(ranks) else (None, None)
        out.append(Standing(place, games.models[model], strengths[j], win_rates[j], *interval,
                            games=int((played == model).sum()), sessions=len(np.unique(sessions[played == model])),
                            never_lost=model in _never_lost(games)))
    return out


def _never_lost(games: Games) -> set[int]:
    """Candidates with no game they lost or tied (a result below 1)."""
    results = np.concatenate([games.outcome, 1.0 - games.outcome])
    players = np.concatenate([games.first, games.second])
    below = set(np.unique(players[results < 1.0]).tolist())
    return set(np.unique(players).tolist()) - below


def _separation_warnings(games: Games, found: Fit) -> list[str]:
    out = []
    unbeaten = sorted(games.models[m] for m in _never_lost(games))
    if unbeaten:
        out.append(f"never lost a game: {', '.join(unbeaten)}; the likelihood alone puts such a strength at infinity, "
                   f"the prior ({PRIOR}) keeps it finite: read it as a lower bound")
    groups = _components(found.design.candidates, games)
    if groups > 1:
        out.append(f"the candidates fall into {groups} groups never compared with each other: strengths are "
                   "comparable within a group only")
    return out


def _components(candidates: np.ndarray, games: Games) -> int:
    """How many groups of candidates the games connect (union-find)."""
    parent = {int(c): int(c) for c in candidates}

    def root(c: int) -> int:
        while parent[c] != c:
            parent[c] = parent[parent[c]]
            c = parent[c]
        return c

    for a, b in set(zip(games.first.tolist(), games.second.tolist())):
        parent[root(a)] = root(b)
    return len({root(c) for c in parent})


def _slot(games: Games, found: Fit, samples: np.ndarray) -> list[Coefficient]:
    """The first-shown coefficient per judge and pooled (their average weighted by games whose
    display order is known): log-odds that the answer shown first wins, other things equal."""
    judges = found.design.slot_judges
    if len(judges) == 0:
        return []
    k = len(found.design.candidates)
    columns = slice(k - 1, k - 1 + len(judges))
    counts = np.array([(games.slot_known & (games.reviewer == r)).sum() for r in judges], dtype=np.float64)
    share = counts / counts.sum()
    g = found.n_sessions
    removes = "the first-shown answer's advantage (games whose display order is unknown carry none)"
    name = "first shown, pooled" if len(judges) > 1 else f"first shown, {games.reviewers[judges[0]]}"
    pooled = Coefficient(name, _estimate(float(found.params[columns] @ share), samples[:, columns] @ share, g), removes)
    if len(judges) == 1:
        return [pooled]
    return [pooled] + [Coefficient(f"first shown, {games.reviewers[r]}",
                                   _estimate(found.params[k - 1 + i], samples[:, k - 1 + i], g), removes)
                       for i, r in enumerate(judges.tolist())]


def _style(found: Fit, samples: np.ndarray) -> list[Coefficient]:
    names = found.design.style_names
    start = found.design.x.shape[1] - len(names)
    out = []
    for i, name in enumerate(names):
        sd = found.design.style_sd[i]
        out.append(Coefficient(f"{name}, per SD", _estimate(found.params[start + i], samples[:, start + i],
                                                             found.n_sessions),
                               _REMOVES.get(name.split(" ")[0], f"the judges' preference for {name}"),
                               _estimate(found.params[start + i] / sd, samples[:, start + i] / sd, found.n_sessions)))
    return out


_REMOVES = {"length": "the judges' preference for the longer answer: strengths are at equal length",
            "headers": "the preference for markdown headers", "list": "the preference for list items",
            "bold": "the preference for bold spans"}


def _threshold_estimates(found: Fit, samples: np.ndarray) -> list[Coefficient]:
    """The verdict levels' thresholds; resamples whose one step left them unordered are left out."""
    p = found.design.x.shape[1]
    ordered = found.design.model.feasible_rows(samples[:, p:])
    samples = np.where(ordered[:, None], samples, np.nan)
    names = {1: ["tie band a"], 2: ["tie band a1", "strong-verdict band a2"]}.get(found.design.model.n_params, [])
    return [Coefficient(name, _estimate(found.params[p + i], samples[:, p + i], found.n_sessions),
                        "how wide the verdict levels are on the logit scale") for i, name in enumerate(names)]


def _separability(strengths: list[Estimate]) -> float:
    """The share of candidate pairs whose strength CIs do not overlap."""
    pairs = separated = 0
    for i in range(len(strengths)):
        for j in range(i + 1, len(strengths)):
            a, b = strengths[i], strengths[j]
            if a.has_interval and b.has_interval:
                pairs += 1
                separated += a.ci_high < b.ci_low or b.ci_high < a.ci_low
    return separated / pairs if pairs else math.nan
