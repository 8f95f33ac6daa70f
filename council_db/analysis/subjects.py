"""Who a time or pair analysis is about: reviewers or candidate models, as codes and names.

A drift common to every reviewer cannot be told from a change in the questions (the session
effects absorb it), so trends are reported relative to the other subjects. Centring on the
*median* of the others, not their mean, keeps one drifting reviewer from making every other
reviewer look as if it drifted the other way.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from council_db.analysis.score_data import ScoreData

Kind = Literal["reviewer", "model"]


def codes_and_names(data: ScoreData, kind: Kind) -> tuple[np.ndarray, list[str]]:
    """Each record's subject code and the subjects' names."""
    if kind == "reviewer":
        return data.reviewer, data.reviewers
    return data.model, data.models


def median_of_others(values: np.ndarray) -> np.ndarray:
    """Along the last axis (subjects): for every subject j, the median of the other subjects'
    values. One sort: the i-th smallest of j's others is the (i+1)-th smallest of all when j's
    value is at or below the i-th smallest (ties give equal values either way), else the i-th."""
    n = values.shape[-1]
    ranked = np.sort(values, axis=-1)

    def other(i: int) -> np.ndarray:
        return np.where(values <= ranked[..., i:i + 1], ranked[..., i + 1:i + 2], ranked[..., i:i + 1])

    if (n - 1) % 2:
        return other((n - 2) // 2)
    return (other((n - 1) // 2 - 1) + other((n - 1) // 2)) / 2.0


def median_weights(values: np.ndarray, j: int) -> np.ndarray:
    """Weights w with w @ values == the median of the values other than the j-th: 1 on the
    middle one, or 1/2 on the two middle ones (for the variance of a median contrast)."""
    others = [i for i in range(len(values)) if i != j]
    order = sorted(others, key=lambda i: values[i])
    w = np.zeros(len(values))
    middle = len(order) // 2
    if len(order) % 2:
        w[order[middle]] = 1.0
    else:
        w[order[middle - 1]] = w[order[middle]] = 0.5
    return w
