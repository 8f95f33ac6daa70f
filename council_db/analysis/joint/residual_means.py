"""Means of joint-model residuals over a group of records (a reviewer x candidate pair), with
the per-session influence that makes their standard error honest.

A residual mean is a linear function of the scores, (1/n) 1' (I - H) y. Its per-session
influence is not the session's residual total alone: the fit estimated the reviewer's severity
and the candidate's quality from these same residuals' records, and with 4 candidates and 4
reviewers that removes about half the pair's variance. Treating the session totals as the
influence (CR1 on raw residual totals) overstated affinity's SEs 1.3-2.4 times, so no affinity
could be found. The influence of session g is (T_g - s_g' M z) / n, with T_g the group's
residual total in g, s_g = X_g' e_g the session's score, M = (X'X)^-1 and z = X' 1_group
(the design's column sums over the group), all on the demeaned design.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class ResidualProjection:
    """What a residual mean's influence needs from the fit, on the records it used."""

    rows: np.ndarray  # positions in the data of the records the fit used
    session: np.ndarray  # their session codes in the data (0..n_sessions-1)
    xs: np.ndarray  # N x p: the demeaned design's kept columns (scaled)
    gram_inv: np.ndarray  # p x p: (xs'xs)^-1
    residuals: np.ndarray  # N

    def influence(self, group: np.ndarray, n_groups: int, totals: np.ndarray) -> np.ndarray:
        """n_groups x sessions: each group's residual totals per session (``totals``, one row
        per group, one column per data session) less the part the fitted effects take,
        s_g' M z. ``group`` is every data record's group code (-1: in none)."""
        code = group[self.rows]
        mine = code >= 0
        p, n_sessions = self.xs.shape[1], totals.shape[1]
        z, scores = np.zeros((n_groups, p)), np.zeros((n_sessions, p))
        for j in range(p):
            z[:, j] = np.bincount(code[mine], weights=self.xs[mine, j], minlength=n_groups)
            scores[:, j] = np.bincount(self.session, weights=self.xs[:, j] * self.residuals, minlength=n_sessions)
        return totals - (z @ self.gram_inv) @ scores.T
