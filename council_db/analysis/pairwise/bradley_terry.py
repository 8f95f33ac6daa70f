"""The Bradley-Terry fit: strengths, a first-shown coefficient per judge, style coefficients and
the outcome model's thresholds, by Newton's method on the exact (penalised) log-likelihood.

The linear predictor of a game is theta_first - theta_second + gamma_judge [slot known] +
beta . style difference (each style column standardised over the games, as Chatbot Arena
does, so beta is per SD). Strengths are fitted against one candidate held at 0 and reported
centred (sum to zero) or against ``--baseline``.

Separation (a candidate that never loses, a judge that always prefers the first answer) makes
the maximum-likelihood estimate infinite. Every strength (centred) and coefficient gets a weak
normal prior, SD 10 on the logit scale (a ridge of 1/100, as choix's ``alpha`` or Newman's
(2023) fictitious games do): it moves an estimate the data determine by far less than its
standard error and keeps a separated one finite; the ranking says which candidates never lost.

Intervals resample whole sessions (both orders of one prompt are one cluster). Each resample is
one Newton step from the full fit with the resampled score and Hessian, summed from per-session
parts (the one-step bootstrap: first-order equal to refitting, Davison, Hinkley & Schechtman
1986; Hu & Kalbfleisch 2000), so B resamples cost B matrix products, not B fits.
"""

from __future__ import annotations

import math

import msgspec
import numpy as np

from council_db.analysis.pairwise.games import Games
from council_db.analysis.pairwise.outcomes import Derivatives, OutcomeModel, chosen, derivatives
from council_db.analysis.stats import session_weights

RIDGE = 0.01  # prior precision: a normal prior with SD 10 on each centred strength and coefficient
N_BOOT = 1000
MAX_STEPS = 100
TOLERANCE = 1e-9


class Design(msgspec.Struct, frozen=True):
    """The games as the model sees them: columns of the linear predictor and the outcomes."""

    x: np.ndarray  # (G, P) strengths (all but ``held``), slot per judge, standardised style
    weights: np.ndarray  # (G, L) each game's weight per outcome level
    session: np.ndarray  # (G,) sorted cluster numbers
    model: OutcomeModel
    candidates: np.ndarray  # (K,) model indices of the candidates that played
    held: int  # position in ``candidates`` of the one whose strength is fixed at 0
    slot_judges: np.ndarray  # reviewer indices with a slot column, in column order
    style_names: list[str]
    style_sd: np.ndarray  # (len(style_names),) SD each style column was divided by
    penalty: np.ndarray  # (P + T, P + T) the prior's precision matrix


def design(games: Games, style: np.ndarray | None = None, style_names: list[str] | None = None,
           held_model: int | None = None, strong_as_three: bool = False) -> Design:
    """The design of ``games`` (already restricted to those with known style, if any);
    ``held_model`` (a model index) is fixed at 0, by default the first candidate."""
    candidates = np.unique(np.concatenate([games.first, games.second]))
    position = np.full(len(games.models), -1, dtype=np.int64)
    position[candidates] = np.arange(len(candidates))
    held = int(position[held_model]) if held_model is not None else 0
    k, g = len(candidates), len(games)
    strengths = np.zeros((g, k))
    strengths[np.arange(g), position[games.first]] += 1.0
    strengths[np.arange(g), position[games.second]] -= 1.0
    slot_judges = np.unique(games.reviewer[games.slot_known])
    slots = (games.reviewer[:, None] == slot_judges[None, :]) & games.slot_known[:, None]
    names = list(style_names or [])
    columns = np.zeros((g, 0)) if style is None else np.asarray(style, dtype=np.float64).reshape(g, -1)
    sd = columns.std(axis=0) if g else np.ones(columns.shape[1])
    sd = np.where(sd > 0, sd, 1.0)
    standardised = (columns - columns.mean(axis=0)) / sd if g else columns
    x = np.hstack([np.delete(strengths, held, axis=1), slots.astype(np.float64), standardised])
    outcome_model, weights = chosen(games.outcome, strong_as_three)
    return Design(x, weights, games.session, outcome_model, candidates, held, slot_judges, names, sd,
                  _penalty(k, held, x.shape[1], outcome_model.n_params))


def _penalty(k: int, held: int, p: int, t: int) -> np.ndarray:
    """RIDGE on the centred strengths (theta - mean theta, theta_held = 0) and on every other
    coefficient; none on the thresholds."""
    to_theta = np.delete(np.eye(k), held, axis=1)  # theta = to_theta @ free strengths
    centred = to_theta - to_theta.mean(axis=0)
    out = np.zeros((p + t, p + t))
    out[:k - 1, :k - 1] = centred.T @ centred
    out[k - 1:p, k - 1:p] = np.eye(p - k + 1)
    return RIDGE * out


class Fit(msgspec.Struct, frozen=True):
    design: Design
    params: np.ndarray  # (P + T,) free strengths, slot, style, thresholds
    loglik: float
    steps: int
    converged: bool
    n_sessions: int  # clusters with a game


def fit(found: Design) -> Fit:
    """The penalised maximum-likelihood fit, by Newton's method with step halving; each point's
    derivatives are computed once, for its objective and, once accepted, its Newton step."""
    params = np.concatenate([np.zeros(found.x.shape[1]), found.model.start()])
    parts = _parts(found, params)
    objective = _objective(found, params, parts)
    converged, step = False, 0
    for step in range(1, MAX_STEPS + 1):
        gradient, hessian = _score_and_hessian(found, params, parts)
        move = np.linalg.solve(hessian, gradient)
        size = 1.0
        while size > 1e-10:
            trial = params - size * move
            if found.model.feasible(trial[found.x.shape[1]:]):
                trial_parts = _parts(found, trial)
                value = _objective(found, trial, trial_parts)
                if value >= objective - 1e-12:
                    break
            size /= 2.0
        params, parts, change, objective = trial, trial_parts, value - objective, value
        if np.abs(size * move).max() < TOLERANCE or abs(change) < TOLERANCE * 1e-3:
            converged = True
            break
    return Fit(found, params, objective, step, converged, len(np.unique(found.session)))


def _parts(found: Design, params: np.ndarray) -> Derivatives:
    p = found.x.shape[1]
    return derivatives(found.model, found.x @ params[:p], params[p:], found.weights)


def _objective(found: Design, params: np.ndarray, parts: Derivatives) -> float:
    return float(parts.loglik.sum() - 0.5 * params @ found.penalty @ params)


def _score_and_hessian(found: Design, params: np.ndarray, parts: Derivatives) -> tuple[np.ndarray, np.ndarray]:
    """The penalised log-likelihood's gradient and Hessian at ``params`` (``parts``: its derivatives)."""
    gradient = np.concatenate([found.x.T @ parts.d_eta, parts.d_a.sum(axis=0)]) - found.penalty @ params
    top = np.hstack([found.x.T @ (found.x * parts.dd_eta[:, None]), found.x.T @ parts.dd_eta_a])
    bottom = np.hstack([parts.dd_eta_a.T @ found.x, parts.dd_a.sum(axis=0)])
    return gradient, np.vstack([top, bottom]) - found.penalty


def resampled_params(result: Fit, n_boot: int = N_BOOT, seed: int = 0) -> np.ndarray:
    """(n_boot, P + T) parameters, one Newton step from the fit per resample of sessions."""
    found, params = result.design, result.params
    parts = _parts(found, params)
    clusters, session = np.unique(found.session, return_inverse=True)
    scores, hessians = _per_session(found, parts, session, len(clusters))
    prior_gradient = found.penalty @ params
    size = len(params)
    out = np.empty((n_boot, size))
    row = 0
    for weights in session_weights(len(clusters), n_boot, seed):
        gradient = weights @ scores - prior_gradient
        hessian = (weights @ hessians).reshape(-1, size, size) - found.penalty
        try:
            out[row:row + len(weights)] = params - np.linalg.solve(hessian, gradient[..., None])[..., 0]
        except np.linalg.LinAlgError:
            out[row:row + len(weights)] = math.nan
        row += len(weights)
    return out


def robust_covariance(result: Fit) -> np.ndarray:
    """The parameters' cluster-robust (sandwich) covariance, sessions as clusters, with the
    small-sample factor G / (G - 1) (Liang & Zeger 1986): the covariance the one-step bootstrap
    draws from to first order, had in one pass over the games, without resampling."""
    found = result.design
    parts = _parts(found, result.params)
    clusters, session = np.unique(found.session, return_inverse=True)
    g = len(clusters)
    scores = _session_scores(found, parts, session, g)
    bread = np.linalg.inv(-_score_and_hessian(found, result.params, parts)[1])
    return bread @ (scores.T @ scores) @ bread * (g / (g - 1) if g > 1 else math.nan)


def _session_scores(found: Design, parts: Derivatives, session: np.ndarray, n_clusters: int) -> np.ndarray:
    """Each session's score, the log-likelihood's gradient over its games: (S, P + T)."""
    p = found.x.shape[1]
    scores = np.zeros((n_clusters, p + found.model.n_params))
    for column in range(scores.shape[1]):
        values = found.x[:, column] * parts.d_eta if column < p else parts.d_a[:, column - p]
        scores[:, column] = np.bincount(session, weights=values, minlength=n_clusters)
    return scores


def _per_session(found: Design, parts, session: np.ndarray, n_clusters: int,
                 block: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """Each session's score (S, P + T) and flattened Hessian (S, (P + T)^2): games in blocks,
    each game's Hessian an outer product of its design row (and the threshold terms)."""
    x = np.hstack([found.x, np.zeros((len(found.x), found.model.n_params))])
    p, size = found.x.shape[1], x.shape[1]
    scores = _session_scores(found, parts, session, n_clusters)
    hessians = np.zeros((n_clusters, size * size))
    for start in range(0, len(x), block):
        rows = slice(start, start + block)
        game = x[rows, :, None] * x[rows, None, :] * parts.dd_eta[rows, None, None]
        if found.model.n_params:
            cross = x[rows, :p, None] * parts.dd_eta_a[rows, None, :]
            game[:, :p, p:] += cross
            game[:, p:, :p] += cross.transpose(0, 2, 1)
            game[:, p:, p:] += parts.dd_a[rows]
        here = session[rows]
        starts = np.flatnonzero(np.concatenate([[True], here[1:] != here[:-1]]))
        hessians[here[starts]] += np.add.reduceat(game.reshape(len(here), -1), starts, axis=0)
    return scores, hessians
