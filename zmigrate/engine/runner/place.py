"""Where job records live: `zmigrate/jobs/<id>/` under the user's state directory (0700)."""

from __future__ import annotations

import os
import re
import secrets
import time
from pathlib import Path
from typing import Final

from ..errors import ZmigrateError

# A test (or a packager) points the records elsewhere with this variable.
JOBS_DIR_ENV: Final = "ZMIGRATE_JOBS_DIR"
_ID_RE: Final = re.compile(r"^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$")


class JobNotFoundError(ZmigrateError):
    """No record of that job id here."""


def jobs_root() -> Path:
    """$ZMIGRATE_JOBS_DIR, or `<user state dir>/zmigrate/jobs`."""
    override = os.environ.get(JOBS_DIR_ENV)
    if override:
        return Path(override)
    import platformdirs

    return platformdirs.user_state_path("zmigrate") / "jobs"


def new_id(now: float | None = None) -> str:
    """`20261126-231500-a1b2c3`: sorts by start time, unique enough per user."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(time.time() if now is None else now))
    return f"{stamp}-{secrets.token_hex(3)}"


def valid_id(job_id: str) -> str:
    """`job_id` if it has the form `new_id` makes (so it never names a path elsewhere)."""
    if not _ID_RE.match(job_id):
        raise JobNotFoundError(f"{job_id!r} is not a job id",
                               fix="`zmigrate jobs` lists the jobs and their ids")
    return job_id


def create_dir(job_id: str) -> Path:
    """The new job's record directory, readable by its user only."""
    root = jobs_root()
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = root / valid_id(job_id)
    path.mkdir(mode=0o700)
    os.chmod(path, 0o700)  # whatever the umask
    return path


def job_dir(job_id: str) -> Path:
    """An existing job's record directory."""
    path = jobs_root() / valid_id(job_id)
    if not (path / "state.json").is_file():
        raise JobNotFoundError(f"no job {job_id} here (looked in {jobs_root()})",
                               fix="`zmigrate jobs` lists the jobs and their ids")
    return path


def known(job_id: str) -> bool:
    """Whether this computer has the record of `job_id` (else it may run elsewhere)."""
    return (jobs_root() / valid_id(job_id) / "state.json").is_file()


def all_ids() -> list[str]:
    """Every job id with a record, oldest first."""
    root = jobs_root()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if _ID_RE.match(p.name)
                  and (p / "state.json").is_file())
