"""Which database a command uses: --db, else $COUNCIL_DB, else the user data directory."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_module


def db_path(tmp_path: Path, *args: str, env: dict[str, str]) -> str:
    import os
    import subprocess
    import sys

    environment = {k: v for k, v in os.environ.items() if k != "COUNCIL_DB"} | env
    result = subprocess.run([sys.executable, "-m", "council_db", *args, "db", "path"], env=environment,
                            capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_the_default_is_council_db_in_the_user_data_directory(tmp_path):
    data = tmp_path / "xdg"
    assert db_path(tmp_path, env={"XDG_DATA_HOME": str(data)}) == str(data / "council-db" / "council.db")


def test_the_environment_variable_names_the_database(tmp_path):
    chosen = tmp_path / "team.db"
    assert db_path(tmp_path, env={"COUNCIL_DB": str(chosen)}) == str(chosen)


def test_the_option_wins_over_the_environment_and_relative_paths_resolve(tmp_path):
    assert db_path(tmp_path, "--db", "mine.db", env={"COUNCIL_DB": str(tmp_path / "team.db")}) == str(
        tmp_path / "mine.db")


def test_a_url_is_used_as_given_with_its_password_hidden(tmp_path):
    shown = db_path(tmp_path, "--db", "postgresql+psycopg://me:secret@127.0.0.1:5/council", env={})
    assert shown == "postgresql+psycopg://me:***@127.0.0.1:5/council"


def test_the_first_import_creates_the_default_database_there(tmp_path):
    data = tmp_path / "xdg"
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "COUNCIL_DB"} | {"XDG_DATA_HOME": str(data)}
    read = subprocess.run([sys.executable, "-m", "council_db", "stats"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert read.returncode == 1 and not data.exists()  # a command that only reads creates nothing
    result = subprocess.run([sys.executable, "-m", "council_db", "import", "-"], env=env, input="",
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and (data / "council-db" / "council.db").exists()
    assert "created council-db database" in result.stderr


def test_module_and_console_script_agree(tmp_path):
    assert run_module("--version").stdout.decode().startswith("council-db ")
