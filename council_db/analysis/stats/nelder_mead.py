"""Minimising a smooth function of a few parameters without its gradient (Nelder & Mead 1965),
in numpy: what the hierarchical model's variance components need (lme4 maximised its REML
criterion the same way before bobyqa), without importing scipy into a report."""

from __future__ import annotations

from typing import Callable

import numpy as np

REFLECT, EXPAND, CONTRACT, SHRINK = 1.0, 2.0, 0.5, 0.5


def minimise(function: Callable[[np.ndarray], float], start: np.ndarray, step: float = 0.5,
             tolerance: float = 1e-8, max_evaluations: int = 2000) -> tuple[np.ndarray, float]:
    """The point of the simplex around ``start`` where ``function`` is lowest when the simplex's
    values differ by at most ``tolerance`` (or the evaluations run out), and its value."""
    start = np.asarray(start, dtype=np.float64)
    simplex = np.vstack([start, start + step * np.eye(len(start))])
    values = np.array([function(point) for point in simplex])
    evaluations = len(values)
    while evaluations < max_evaluations:
        order = np.argsort(values)
        simplex, values = simplex[order], values[order]
        if values[-1] - values[0] <= tolerance * (1.0 + abs(values[0])):
            break
        centre = simplex[:-1].mean(axis=0)
        reflected = centre + REFLECT * (centre - simplex[-1])
        value = function(reflected)
        evaluations += 1
        if value < values[0]:
            expanded = centre + EXPAND * (reflected - centre)
            grown = function(expanded)
            evaluations += 1
            simplex[-1], values[-1] = (expanded, grown) if grown < value else (reflected, value)
        elif value < values[-2]:
            simplex[-1], values[-1] = reflected, value
        else:
            toward = reflected if value < values[-1] else simplex[-1]
            contracted = centre + CONTRACT * (toward - centre)
            shrunk = function(contracted)
            evaluations += 1
            if shrunk < min(value, values[-1]):
                simplex[-1], values[-1] = contracted, shrunk
            else:
                simplex[1:] = simplex[0] + SHRINK * (simplex[1:] - simplex[0])
                values[1:] = [function(point) for point in simplex[1:]]
                evaluations += len(simplex) - 1
    best = int(np.argmin(values))
    return simplex[best], float(values[best])
