"""What a sampled report says about its sample: how it was drawn, and which sessions each
figure rests on (``coverage_model``), in its JSON and in its one warning line."""

from __future__ import annotations

import msgspec
import numpy as np

from council_db.report.coverage_model import figure_sources
from council_db.report.model import Sample


def stated(sample: Sample, every_session_totals: bool, hash_sample: np.ndarray | None, per_subject: int) -> Sample:
    """``sample`` with what the stratification added and each figure's sessions."""
    added = 0 if hash_sample is None else int((~hash_sample).sum())
    return msgspec.structs.replace(sample, added=added, per_subject=per_subject,
                                   figures=figure_sources(every_session_totals, hash_sample is not None))


def sample_warning(sample: Sample) -> str:
    """The report's sample note: the sample's size and make-up, and which figures read what."""
    figures = sample.figures
    drawn = f"{sample.sessions - sample.added:,} by key hash"
    if sample.added:
        drawn += f", {sample.added:,} added so every reviewer and candidate has min(its sessions, {sample.per_subject})"
    note = (f"record-level analyses use a sample of {sample.sessions:,} of the window's {sample.of:,} sessions "
            f"({drawn}; their n says so)")
    if figures.counts == "every_session":
        note += "; counts and length correlations use every session"
    pooled = [name for name in ("length correlations", "agreement")
              if getattr(figures, name.split()[0]) == "hash_sample"]
    if pooled:
        verb = "use" if len(pooled) > 1 else "uses"
        note += f"; {' and '.join(pooled)} {verb} the {sample.sessions - sample.added:,} chosen by key hash alone"
    return note
