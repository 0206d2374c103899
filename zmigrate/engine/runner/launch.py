"""Starting a job's runner apart from its caller: a transient unit of the user's systemd
manager where one answers and outlives a logout (the user lingers: logout.py), so
`systemctl --user status` and the journal see it; else a process of its own session (setsid,
stdin from /dev/null, output to files in the record), which logind leaves running at logout
unless it is set to kill users' processes (then the job's status says so)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Final

from ..errors import ZmigrateError
from . import logout, record, state
from .place import create_dir, new_id
from .state import JobState, Status

SYSTEMD: Final = "systemd"
SETSID: Final = "setsid"
# A test forces the fallback where a user manager would answer.
LAUNCHER_ENV: Final = "ZMIGRATE_RUNNER_LAUNCHER"

# The intermediate process of the double fork: starts the runner in a session of its own,
# says its pid, and exits at once (so the runner is nobody's child but init's).
_DETACH = (
    "import os, subprocess, sys\n"
    "out = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)\n"
    "p = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=out, stderr=out,\n"
    "                     start_new_session=True, close_fds=True)\n"
    "print(p.pid)\n"
)


class RunnerStartError(ZmigrateError):
    """The runner could not be started."""


def runner_argv(job_id: str) -> list[str]:
    """The runner's command: this Python running zmigrate's hidden `_runner` subcommand."""
    return [sys.executable, "-m", "zmigrate", "_runner", job_id]


def unit_name(job_id: str) -> str:
    return f"zmigrate-job-{job_id}"


def systemd_argv(job_id: str, env: dict[str, str]) -> list[str]:
    """`systemd-run --user` of the runner: a transient service named after the job, collected
    when it ends, with the variables the runner needs (the unit does not inherit ours)."""
    keep = sorted(k for k in env if k.startswith("ZMIGRATE_") or k in ("PYTHONPATH", "PATH"))
    return ["systemd-run", "--user", "--unit", unit_name(job_id), "--collect", "--quiet",
            "--property=Type=exec", *[f"--setenv={k}={env[k]}" for k in keep],
            *runner_argv(job_id)]


def user_manager(run: Callable[[Sequence[str]], int] | None = None) -> bool:
    """Whether a user systemd manager answers here (`systemctl --user show-environment`)."""
    if os.environ.get(LAUNCHER_ENV) == SETSID:
        return False
    if shutil.which("systemd-run") is None or shutil.which("systemctl") is None:
        return False
    run = run or _status
    return run(["systemctl", "--user", "show-environment"]) == 0


def _status(argv: Sequence[str]) -> int:
    return logout.read_command(argv)[0]


def launcher(manager: Callable[[], bool] | None = None,
             logind: Callable[[], logout.Logind | None] | None = None) -> tuple[bool, str]:
    """Whether the runner goes to the user's systemd manager (one answers and the user
    lingers: a unit of a manager that stops at logout would die with the session that started
    it, an ssh one on a runner host); and what the user must know where a logout ends it."""
    answers = (manager or user_manager)()
    # (On the window's thread as a job starts: linger is read only where a manager answers.)
    facts = logind() if logind is not None else logout.read(lingers=answers)
    if answers and facts is not None and facts.linger:
        return True, ""
    return False, logout.warning(facts, socket.gethostname())


def start(what: str, request: dict[str, object]) -> Status:
    """Write the job's record (its request) and start its runner; its first status."""
    job_id = new_id()
    directory = create_dir(job_id)
    (directory / record.REQUEST).write_text(json.dumps(request, sort_keys=True))
    use_systemd, note = launcher()
    status = Status(id=job_id, what=what, request=request, started=time.time(),
                    launcher=SYSTEMD if use_systemd else SETSID,
                    unit=unit_name(job_id) if use_systemd else "", note=note)
    state.write(directory / record.STATE, status)
    if use_systemd:
        _run_checked(systemd_argv(job_id, dict(os.environ)), "systemd-run")
        return status
    pid = _detach(directory, runner_argv(job_id))
    take_pid(directory, pid)
    return replace(status, pid=pid)


def take_pid(directory: Path, pid: int) -> Status:
    """The launcher's word on the runner's pid, after the runner may already have written its
    own state (running, even ended): only a record still starting without a pid takes it,
    read and written under the record's lock (never a stale state written over a newer)."""
    return state.update(directory / record.STATE, lambda s: replace(s, pid=pid)
                        if s.pid is None and s.state is JobState.STARTING else None)


def _detach(directory: Path, argv: list[str]) -> int:
    r = subprocess.run([sys.executable, "-c", _DETACH, str(directory / "runner.log"), *argv],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                       cwd="/")
    if r.returncode != 0 or not r.stdout.strip().isdigit():
        raise RunnerStartError(f"the job's runner did not start: {r.stderr.strip()[-300:]}",
                               fix=f"see {directory}/runner.log")
    return int(r.stdout.strip())


def _run_checked(argv: list[str], name: str) -> None:
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=60)
    if r.returncode != 0:
        raise RunnerStartError(f"{name} could not start the job's runner: "
                               f"{r.stderr.strip()[-300:]}",
                               fix="`systemctl --user status` says whether the user manager "
                               f"runs; or set {LAUNCHER_ENV}=setsid to start it without it")
