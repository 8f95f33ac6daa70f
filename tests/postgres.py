"""A real PostgreSQL server for the tests: a throwaway cluster on 127.0.0.1, one database per test.

Debian's binaries live in /usr/lib/postgresql/VERSION/bin. initdb refuses to run as root, so
as root the server runs as the unprivileged ``postgres`` system user, in a temporary directory
it owns. Authentication is ``trust`` on 127.0.0.1 only, and the cluster is deleted afterwards.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

SUPERUSER = "postgres"


def find_binaries() -> Path | None:
    """The newest installed server's bin directory, or None when there is none."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parent.parent.name))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def why_unavailable() -> str | None:
    """Why the PostgreSQL tests cannot run here, or None when they can."""
    if find_binaries() is None:
        return "PostgreSQL server binaries (initdb, pg_ctl) not found; install Debian's postgresql package"
    if os.geteuid() == 0 and not _has_user(SUPERUSER):
        return "running as root and there is no unprivileged 'postgres' user to run the server as"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed: pip install -e '.[test]'"
    return None


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Cluster:
    """initdb + pg_ctl start on a free port; ``database()`` makes an empty database, ``drop`` ends it."""

    def __init__(self) -> None:
        self.bin = find_binaries()
        self.directory = Path(tempfile.mkdtemp(prefix="council-db-pg-"))
        self.data = self.directory / "data"
        self.port = _free_port()
        self._names = itertools.count(1)
        self._as_user = ["runuser", "-u", SUPERUSER, "--"] if os.geteuid() == 0 else []
        if self._as_user:
            user = pwd.getpwnam(SUPERUSER)
            os.chown(self.directory, user.pw_uid, user.pw_gid)
        self.directory.chmod(0o700)

    def _run(self, program: str, *args: str) -> None:
        command = [*self._as_user, str(self.bin / program), *args]
        finished = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if finished.returncode != 0:
            raise RuntimeError(f"{program} failed:\n{finished.stdout}\n{finished.stderr}")

    def start(self) -> Cluster:
        self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "-A", "trust", "-E", "UTF8",
                  "--locale=C", "--no-sync")
        options = (f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories={self.directory} "
                   "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300")
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.directory / "server.log"), "-o", options,
                  "-w", "start")
        return self

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def _admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(f"host=127.0.0.1 port={self.port} user={SUPERUSER} dbname=postgres",
                             autocommit=True) as connection:
            connection.execute(sql)

    def database(self, template: str | None = None) -> str:
        """A new database, empty or a copy of the one at ``template`` (a URL); its URL."""
        name = f"test_{next(self._names)}"
        copy = f" TEMPLATE {template.rsplit('/', 1)[1]}" if template else ""
        self._admin(f"CREATE DATABASE {name}{copy}")
        return self.url(name)

    def drop(self, url: str) -> None:
        """Drop a database, ending connections a test left open."""
        self._admin(f"DROP DATABASE IF EXISTS {url.rsplit('/', 1)[1]} WITH (FORCE)")
