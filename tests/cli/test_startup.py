"""Start-up stays cheap (issue 16): `council-db --help` loads typer and the command table, not
the commands; a command's --help loads that command's module alone; neither loads the
libraries the work needs. Checked by what a real process imports, not by timing it
(benchmarks/bench_small_history.py times it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import typer
from typer.core import TyperCommand

from council_db.cli.app import COMMANDS, SUMMARIES, app

HEAVY = {"numpy", "scipy", "sqlalchemy", "alembic", "pydantic", "msgspec", "rich", "httpx", "platformdirs"}
SHARED = {"council_db", "council_db.errors", "council_db.cli", "council_db.cli.app", "council_db.cli.context",
          "council_db.cli.lazy_group"}


def loaded_modules(*args: str) -> set[str]:
    """The modules a real council-db process has imported once it has run ``args``."""
    script = ("import contextlib, io, json, sys\n"
              "from council_db.cli.app import main\n"
              f"sys.argv = ['council-db', *{list(args)!r}]\n"
              "with contextlib.redirect_stdout(io.StringIO()):\n"
              "    try:\n"
              "        main()\n"
              "    except SystemExit as done:\n"
              "        assert done.code == 0, done.code\n"
              "print(json.dumps(sorted(sys.modules)))\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr.decode()
    return set(json.loads(result.stdout))


def council_db_modules(modules: set[str]) -> set[str]:
    return {name for name in modules if name.split(".")[0] == "council_db"}


def libraries(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


def test_help_loads_no_command_module_and_no_library_the_work_needs():
    modules = loaded_modules("--help")

    assert council_db_modules(modules) == SHARED
    assert not libraries(modules) & HEAVY


@pytest.mark.parametrize("args, own", [
    (["bias-report", "--help"], {"council_db.cli.report", "council_db.cli.window_options", "council_db.cli.formats"}),
    (["stats", "-h"], {"council_db.cli.inspecting", "council_db.cli.output", "council_db.cli.formats"}),
    (["db", "check", "--help"], {"council_db.cli.db", "council_db.cli.output", "council_db.cli.formats"}),
])
def test_a_commands_help_loads_that_commands_module_alone(args, own):
    modules = loaded_modules(*args)

    assert council_db_modules(modules) == SHARED | own
    assert not libraries(modules) & HEAVY  # typer 0.29 would load pydantic here (pyproject.toml)


def test_the_command_list_shows_what_each_commands_own_help_would():
    """SUMMARIES stand in for the commands' docstrings in --help's list: at any terminal
    width they must shorten to the same line."""
    root = typer.main.get_command(app)

    assert list(SUMMARIES) == list(COMMANDS) == list(root.commands)
    for name, summary in SUMMARIES.items():
        command = root.commands[name]
        for width in range(10, 200):
            listed = TyperCommand(name, help=summary).get_short_help_str(width)
            assert listed == command.get_short_help_str(width), (name, width)


@pytest.mark.parametrize("given, expected", [(None, "1"), ("2", "2")])
def test_the_cli_runs_numpys_blas_on_one_thread_unless_the_user_set_it(given, expected):
    """Set before any command loads numpy: OpenBLAS reads it once, when it is loaded."""
    script = ("import os, sys\n"
              "from council_db.cli.app import main\n"
              "sys.argv = ['council-db', '--version']\n"
              "try:\n"
              "    main()\n"
              "except SystemExit:\n"
              "    pass\n"
              "assert 'numpy' not in sys.modules\n"
              "print(os.environ['OPENBLAS_NUM_THREADS'])\n")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-1] == expected


# What a text or JSON report of llm-council's records (no judge scores an answer twice, no
# --method bayes, no pairwise verdicts) never runs: loaded where their section is drawn
# (tests/report/test_stability_report.py, test_hierarchical_report.py, test_pairwise_odds_flags.py
# show those sections), not at every report's start-up (issue 32).
UNSHOWN = {"council_db.report.stability_section", "council_db.report.hierarchical_chart",
           "council_db.analysis.pairwise.games", "council_db.analysis.pairwise.slot_odds",
           "council_db.analysis.pairwise.bradley_terry", "council_db.analysis.self_preference.on_pairs"}


@pytest.fixture(scope="module")
def report_db(tmp_path_factory) -> str:
    """A 30-session store of simulated llm-council records."""
    folder = tmp_path_factory.mktemp("startup")
    records, db = folder / "records.jsonl", folder / "council.db"
    for args in (["simulate", "-o", str(records), "--sessions", "30"], ["--db", str(db), "import", str(records)]):
        subprocess.run([sys.executable, "-m", "council_db", *args], capture_output=True, check=True, timeout=120)
    return str(db)


def test_the_report_loads_no_pydantic_nor_the_sections_it_does_not_show(report_db):
    """The report's contract is msgspec structs: pydantic's import and model building were
    0.1 s of every report. pydantic stays the authority on imported lines."""
    db = report_db
    for fmt in ("text", "json"):
        modules = loaded_modules("--db", str(db), "bias-report", "--format", fmt)
        assert "pydantic" not in libraries(modules)
        assert not modules & UNSHOWN


def test_the_report_imports_no_statistics_module(report_db):
    """The normal quantile is AS 241 written out, not statistics.NormalDist: the module and
    the fractions and decimal it imports were 5-9 ms of every report's first call."""
    assert "statistics" not in libraries(loaded_modules("--db", report_db, "bias-report"))


def test_the_report_imports_no_numpy_ma(report_db):
    """np.unique of plain values, np.median and np.quantile ask numpy.ma whether their input is
    masked, importing it (13-23 ms of a report's first call): the report takes distinct
    values, medians and quantiles from stats/unique_rows and stats/order_statistics."""
    assert "numpy.ma" not in loaded_modules("--db", report_db, "bias-report")


# Python 3.11 compiles each dataclass's __init__, __repr__ and __eq__ from source as its module
# is imported: the 60 a report loaded cost 80 ms of every process's start-up (issue 32). Its
# records are msgspec structs (tens of microseconds each) but these, each for a reason: the
# joint model's (joint/: JointFit, Solved, Effect, FixedTotals, Design, ResidualProjection) and
# the session tests' (sessions/: Cells, SessionAnomaly, SessionTests), rewritten this round by
# their owners; Window (a field kept out of repr and equality, which a struct cannot say),
# WindowTotals (likewise) and the CLI's State (--help loads no msgspec).
DATACLASS_BUDGET = 12


def test_the_reports_start_up_compiles_no_more_dataclasses_than_its_budget(report_db):
    script = ("import contextlib, dataclasses, io, sys\n"
              "from council_db.cli.app import main\n"
              f"sys.argv = ['council-db', '--db', {report_db!r}, 'bias-report']\n"
              "with contextlib.redirect_stdout(io.StringIO()):\n"
              "    try:\n"
              "        main()\n"
              "    except SystemExit as done:\n"
              "        assert done.code == 0, done.code\n"
              "print(sorted(f'{name}.{value.__name__}' for name, module in list(sys.modules.items())\n"
              "             if name.startswith('council_db') for value in vars(module).values()\n"
              "             if isinstance(value, type) and dataclasses.is_dataclass(value)\n"
              "             and value.__module__ == name))\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    made = eval(result.stdout)

    assert len(made) <= DATACLASS_BUDGET, made
