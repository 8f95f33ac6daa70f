"""Simulated judges and human raters as the analyses read them: ScoreData from the simulator's
lines, and the kinds its truth names."""

from __future__ import annotations

import io
from typing import Any

import msgspec

from council_db.analysis.loading.score_data import ScoreData, from_records
from council_db.simulate import SimulationConfig, write_jsonl

# Two candidates a session, three humans of five per session; "twin" is planted exactly like the
# humans, "judge" with less noise, "noisy" with four times as much.
PAIRWISE: dict[str, Any] = dict(
    models=["a", "b", "c", "d"], reviewers=["judge", "twin", "noisy"], candidates_per_session=2,
    humans=["h1", "h2", "h3", "h4", "h5"], humans_per_session=3, answer_sd=1.0, noise_sd=0.5,
    reviewer_noise_sd={"noisy": 2.0, "judge": 0.3}, integer_scale=True)


def simulated_data(**config: Any) -> tuple[ScoreData, dict[str, Any]]:
    out = io.StringIO()
    truth = write_jsonl(SimulationConfig(**config), out)
    lines = out.getvalue().splitlines()
    return from_records(msgspec.json.decode(f"[{','.join(lines)}]")), truth
