"""Whole-window totals for the bias report, summed in SQL from ``session_stats`` (one short
row per session, kept at import time), so a window of a million sessions is one pass over
a million rows instead of sixteen million records.

They give what needs every session of the window: counts, time span, exclusions, and the
three length correlations that are functions of per-session sums (naive pooled r, the
within-session r with its cluster-robust SE, and the fixed/random-effects meta-analysis).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from council_db.database import Database
from council_db.resources import read_sql
from council_db.stats.correlation import PooledSums, WithinSums
from council_db.stats.meta_analysis import FisherZSums, RandomSums


@dataclass
class WindowTotals:
    """Sums over the window's sessions on the report's scale (the one most usable scores are on)."""

    sessions: int
    records: int
    answers: int  # candidate answers with a usable score from another reviewer
    undated: int
    start_us: int | None
    end_us: int | None
    scale: str
    excluded: dict[str, int]
    pooled: PooledSums
    within: WithinSums
    fisher: FisherZSums
    random_sums: RandomSums = field(repr=False)


def load_totals(db: Database, sessions_sql: str, params: dict[str, Any]) -> WindowTotals | None:
    """The totals of the sessions ``sessions_sql`` selects (their ids); None when the window
    has no usable score."""
    from sqlalchemy import text

    prefix = f"WITH report_window AS ({sessions_sql}) "
    with db.engine.connect() as connection:
        rows = [row._mapping for row in connection.execute(text(prefix + read_sql("report_session_sums")), params)]
    usable = [row for row in rows if row["usable"]]
    if not usable:
        return None
    main = max(usable, key=lambda row: (row["usable"], -row["scale_id"]))
    excluded = {"unscored": int(sum(row["unscored"] for row in rows)),
                "out_of_scale": int(sum(row["out_of_scale"] for row in rows))}
    excluded.update({f"other_scale:{row['scale']}": int(row["usable"]) for row in usable if row is not main})

    def random_sums(tau2: float) -> tuple[float, float]:
        query = text(prefix + read_sql("report_session_random_effects"))
        with db.engine.connect() as connection:
            sw_star, swz_star = connection.execute(query, {**params, "tau2": tau2,
                                                           "scale_id": main["scale_id"]}).one()
        return float(sw_star), float(swz_star)

    return WindowTotals(  # int() and float(): PostgreSQL sums come back as Decimal
        sessions=int(main["sessions"]), records=int(main["usable"]), answers=int(main["answers"]),
        undated=int(main["undated"]),
        start_us=main["start_us"], end_us=main["end_us"], scale=main["scale"],
        excluded={reason: count for reason, count in excluded.items() if count},
        pooled=PooledSums.from_raw(int(main["usable"]), *(float(main[c]) for c in ("sx", "sy", "sxx", "syy", "sxy"))),
        within=WithinSums(int(main["g"]), *(float(main[f"w_{c}"] or 0.0) for c in (
            "sxy", "sxx", "syy", "sxy_sxy", "sxx_sxx", "syy_syy", "sxx_syy", "sxy_sxx", "sxy_syy"))),
        fisher=FisherZSums(int(main["k"]), *(float(main[c] or 0.0) for c in ("sw", "sw2", "swz", "swz2")),
                           dropped_reasons={c: int(main[c]) for c in (
                               "too_few_answers", "perfect_correlation", "no_correlation")}),
        random_sums=random_sums,
    )
