"""council-db check builds the report for its rules only (report_for_window(for_rules=True)): it
leaves out the agreement between reviewers, the version-drift warnings and, in a sampled window,
the whole-window length correlations, which no flag and no rule reads; every verdict, flag and
other figure stays what the whole report gives, on the demo's planted biases (whole and
sampled) and on real judge data."""

from __future__ import annotations

from pathlib import Path

import pytest

from council_db.analysis.loading.window import Window
from council_db.gate import verdicts
from council_db.gate.rules import Rule
from council_db.report import model as contract
from council_db.report.for_window import report_for_window
from council_db.store.database import open_database
from tests.conftest import Cli
from tests.realdata import fastchat_import, mt_bench_import
from tests.store.test_views import DEMO

EVERY_RULE = [Rule("no-flags"), Rule("severity-max", 0.3), Rule("severity-max", 0.3, on="estimate"),
              Rule("length-max", 0.05), Rule("position-consistency-min", 0.6), Rule("agreement-min", 0.5),
              Rule("retest-max", 0.5), Rule("min-sessions", 50), Rule("min-sessions", 100_000),
              Rule("min-tier", "high")]
LEFT_OUT = ("agreement", "warnings", "generated_at", "length")
JOINT_LENGTH = ("adjusted_effect", "adjusted_effect_per_log_length", "log_length_sd")  # the length rule's and flag's


def _stored(tmp: Path, imports: list[list[str]]) -> str:
    cli = Cli(tmp / "council.db")
    for args in imports:
        result = cli(*[arg.format(folder=tmp) for arg in args])
        assert result.exit_code in (0, 3), result.output  # 3: the real files' unparsable ratings, kept apart
    return f"sqlite:///{tmp / 'council.db'}"


DEMO_IMPORT = [["simulate", "-o", "{folder}/demo.jsonl", *DEMO], ["import", "{folder}/demo.jsonl"]]


@pytest.mark.parametrize(("imports", "sample", "planted"), [
    (DEMO_IMPORT, None, True),
    (DEMO_IMPORT, 100, True),  # a sample of the 300 sessions, with whole-window totals
    # two judges of different answers: no alpha to leave out, and no flag the data can support
    ([mt_bench_import(), fastchat_import("vicuna-13b-20230322-clean-lang")], None, False),
], ids=["demo", "demo-sampled", "realdata"])
def test_the_rules_report_gives_the_same_verdicts_flags_and_figures_as_the_whole_report(tmp_path, imports, sample,
                                                                                       planted):
    db = open_database(_stored(tmp_path, imports), notify=lambda _: None)
    whole = report_for_window(db, Window(), {}, sample_sessions=sample).report
    for_rules = report_for_window(db, Window(), {}, sample_sessions=sample, for_rules=True).report

    assert bool(whole.flags) is planted and (whole.agreement is not None) is planted
    assert for_rules.agreement is None  # the shortcut took effect
    if sample:  # the whole-window sums gave the counts alone
        assert whole.window.sample and whole.length.headline and for_rules.length.headline is None
    assert [getattr(for_rules.length, name) for name in JOINT_LENGTH] == \
        [getattr(whole.length, name) for name in JOINT_LENGTH]
    assert verdicts.judge(for_rules, EVERY_RULE) == verdicts.judge(whole, EVERY_RULE)
    assert {outcome.status for outcome in verdicts.judge(whole, EVERY_RULE)} >= {"pass", "fail"}
    same = {key: value for key, value in contract.to_builtins(whole).items() if key not in LEFT_OUT}
    assert {key: value for key, value in contract.to_builtins(for_rules).items() if key not in LEFT_OUT} == same
    db.engine.dispose()
