"""benchmarks/bench_commands.py measures each command's own peak memory, not its own."""

from __future__ import annotations

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def test_a_commands_peak_memory_leaves_out_the_benchmarks_own(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    from bench_commands import COMMANDS, run

    held = bytearray(400 * 2**20)  # the benchmark holding 400 MB as it starts the command
    held[:: 4096] = b"\1" * len(held[:: 4096])
    _, cpu, peak = run(str(tmp_path / "unused.db"), COMMANDS["orders"])
    assert cpu > 0
    assert peak < 200, f"{peak:.0f} MB: the benchmark's 400 MB counted as the command's"
    del held
    sys.modules.pop("bench_commands", None)
