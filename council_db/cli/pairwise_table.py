"""`leaderboard --method bradley-terry` on screen and in rows: each model's win rate (and
length-controlled win rate) beside its strength, and the model's coefficients under the table."""

from __future__ import annotations

from typing import Any

from council_db.report.text_layout import fitted


def pairwise_columns(model: dict[str, Any]) -> dict[str, Any]:
    """A bradley-terry standing's own columns: win rate and, against a baseline, the LC win rate."""
    if "win_rate" not in model:
        return {}
    win = model["win_rate"]
    out = {"win_rate": win["estimate"], "win_rate_ci_low": win["ci_low"], "win_rate_ci_high": win["ci_high"],
           "never_lost": model["never_lost"]}
    if "length_controlled" in model:
        lc = model["length_controlled"]["lc_win_rate"]
        out |= {"lc_win_rate": lc["estimate"], "lc_ci_low": lc["ci_low"], "lc_ci_high": lc["ci_high"]}
    return out


def pairwise_shown(row: dict[str, Any]) -> dict[str, Any]:
    """The win rates as an 80-column table shows them: percent (their CIs: --wide, json, csv)."""
    if "win_rate" not in row:
        return {}
    shown = {"win %": _percent(row["win_rate"])}
    if "lc_win_rate" in row:
        shown["LC win %"] = _percent(row["lc_win_rate"])
    return shown


def _percent(value: float | None) -> str:
    return "" if value is None else f"{100 * value:.1f}"


def coefficient_lines(result: dict[str, Any], width: int | None = None) -> str:
    """Under the table: the outcome model, what the win rates are against, separability, and
    each coefficient with its 95% CI, odds ratio and what it removes; each line cut at spaces to
    ``width`` columns as the text report's are (None: whole)."""
    model = result["outcome_model"]
    separability = result["separability"]
    lines = [f"model: {model['description']}; strengths on the logit scale, {result['strength_scale'].split('; ')[-1]}",
             f"win rates (ties half): against {result['win_rate_against']}, at no slot or style difference",
             "separability: " + ("n/a" if separability is None else
                                 f"{separability:.0%} of candidate pairs have non-overlapping CIs"),
             f"prior: {result['prior']}"]
    coefficients = result["coefficients"]
    for kind in ("slot", "style", "thresholds"):
        for found in coefficients[kind]:
            lines.append(f"{found['name']}: {_signed(found['estimate'])} [{_signed(found['ci_low'])}, "
                         f"{_signed(found['ci_high'])}]" + (f", odds x{found['odds_ratio']:.2f}"
                                                            if found.get("odds_ratio") is not None else "")
                         + f" (removes {found['removes']})" * (kind == "style" or found is coefficients[kind][0]
                                                              and kind == "slot"))
    if not coefficients["slot"]:
        lines.append("first shown: not estimated (no game's display order is known)")
    if width is not None:
        lines = [part for line in lines for part in fitted(line, width)]
    return "\n".join(lines) + "\n"


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.3f}"
