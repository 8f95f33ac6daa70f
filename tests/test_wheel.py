"""The built wheel carries the migrations and SQL files, and an installed copy works away from the repo."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BIN = "Scripts" if os.name == "nt" else "bin"
EXE = ".exe" if os.name == "nt" else ""


def run(args: list, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=120, **kwargs)
    assert result.returncode == 0, f"{args} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheelhouse")
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "--quiet", "-w", out, REPO])
    wheels = list(out.glob("council_db-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory, wheel) -> Path:
    """A new virtual environment with only the wheel installed (dependencies come via PYTHONPATH)."""
    venv = tmp_path_factory.mktemp("fresh") / "venv"
    run([sys.executable, "-m", "venv", venv])
    python = venv / BIN / f"python{EXE}"
    run([python, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet",
         "--disable-pip-version-check", wheel])
    return venv


@pytest.fixture(scope="module")
def fresh_env() -> dict[str, str]:
    """Resolve council-db's dependencies from this interpreter's site-packages, without network."""
    env = {k: v for k, v in os.environ.items()
           if k not in {"COUNCIL_DB", "PYTHONHOME", "PYTHONPATH", "VIRTUAL_ENV", "PYTHONSTARTUP"}}
    env["PYTHONPATH"] = os.pathsep.join(p for p in site.getsitepackages() if Path(p).is_dir())
    return env


def test_wheel_contains_migrations_and_sql_files(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())

    assert "council_db/migrations/env.py" in names
    assert "council_db/migrations/script.py.mako" in names
    assert "council_db/migrations/versions/0001_initial_schema.py" in names
    for migration in (REPO / "migrations" / "versions").glob("*.py"):
        assert f"council_db/migrations/versions/{migration.name}" in names, "every migration ships"
    sql_files = sorted((REPO / "sql").glob("*.sql"))
    assert sql_files
    for sql in sql_files:
        assert f"council_db/sql/{sql.name}" in names, "every SQL file ships"
    assert "council_db/outlets/datasette_metadata.json" in names, "the Datasette metadata ships"
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "council-db = council_db.cli.app:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_installed_wheel_imports_its_own_copy_and_finds_migrations_inside_the_venv(
    tmp_path, fresh_venv, fresh_env
):
    python = fresh_venv / BIN / f"python{EXE}"
    code = (
        "import json, council_db, council_db.resources as r, council_db.outlets.datasette_metadata as d; "
        "print(json.dumps({'package': council_db.__file__, 'migrations': str(r.migrations_dir()), "
        "'sql': str(r.sql_dir()), 'datasette': str(d.shipped())}))"
    )

    result = run([python, "-c", code], cwd=tmp_path, env=fresh_env)

    found = {key: Path(value).resolve() for key, value in json.loads(result.stdout).items()}
    venv = fresh_venv.resolve()
    for key, path in found.items():
        assert path.is_relative_to(venv), f"{key} resolves to {path}, outside the fresh venv {venv}"
        assert not path.is_relative_to(REPO), f"{key} resolves into the repository: {path}"
    assert found["migrations"].name == "migrations" and found["migrations"].parent.name == "council_db"
    assert found["datasette"].is_file() and found["datasette"].name == "datasette_metadata.json"
    shipped = sorted(p.name for p in (found["migrations"] / "versions").glob("*.py"))
    assert shipped == sorted(p.name for p in (REPO / "migrations" / "versions").glob("*.py"))


def test_installed_console_script_upgrades_a_database_and_reports_stats(tmp_path, fresh_venv, fresh_env):
    council_db = fresh_venv / BIN / f"council-db{EXE}"
    assert council_db.exists()

    upgraded = run([council_db, "--db", "x.db", "db", "upgrade"], cwd=tmp_path, env=fresh_env)
    assert "schema (empty) -> " in upgraded.stderr
    stats = run([council_db, "--db", "x.db", "stats", "--format", "json"], cwd=tmp_path, env=fresh_env)

    assert (tmp_path / "x.db").is_file()
    data = json.loads(stats.stdout)
    assert data["database"].endswith(str((tmp_path / "x.db").resolve()))
    assert data["records"] == 0 and data["sessions"] == 0
    current = run([council_db, "--db", "x.db", "db", "current", "--format", "json"], cwd=tmp_path, env=fresh_env)
    revision = json.loads(current.stdout)
    assert revision["current"] == revision["head"] and revision["up_to_date"] is True


def test_datasette_beside_the_installed_wheel_loads_its_plugin(tmp_path, fresh_venv, fresh_env):
    python = fresh_venv / BIN / f"python{EXE}"

    result = run([python, "-m", "datasette", "plugins"], cwd=tmp_path, env=fresh_env)

    plugins = {plugin["name"]: plugin for plugin in json.loads(result.stdout)}
    assert "council-db" in plugins, plugins
    assert plugins["council-db"]["hooks"] == ["canned_queries", "database_actions", "handle_exception", "prepare_connection",
                                              "register_facet_classes", "register_routes"]
