"""Errors a user can act on: the CLI prints the message (never a traceback) and exits with the code."""


class CouncilDbError(Exception):
    exit_code = 1


class DatabaseTooNew(CouncilDbError):
    """The database was written by a newer council-db; we refuse to touch it."""


class UsageError(CouncilDbError):
    exit_code = 2
