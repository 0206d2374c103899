"""Where a job's runner outlives its user's logout: logind's word (captured `loginctl` output,
tests/data/logind/) and the launcher it chooses."""

from __future__ import annotations

import argparse
import io
from collections.abc import Sequence
from pathlib import Path

import pytest

from zmigrate.cli import jobs as cli_jobs
from zmigrate.engine.runner import launch, logout
from zmigrate.engine.runner.state import JobState, Status
from zmigrate.gui.jobs.panel import job_text

DATA = Path(__file__).resolve().parent.parent / "data" / "logind"
DEBIAN = (DATA / "show-session-kill-debian12.txt").read_text()
KILLING = (DATA / "show-session-kill-users.txt").read_text()
LOGGED_IN = (DATA / "show-user-logged-in.txt").read_text()
LINGERING = (DATA / "show-user-lingering.txt").read_text()


def reader(killing: tuple[int, str], linger: tuple[int, str]) -> logout.Reader:
    """loginctl as a host answered: `killing` for show-session, `linger` for show-user."""
    def read(argv: Sequence[str]) -> tuple[int, str]:
        assert argv[0] == "loginctl"
        if argv[1] == "show-session":
            assert tuple(argv) == logout.KILLING
            return killing
        assert list(argv) == ["loginctl", "show-user", "1000", "-p", "Linger"]
        return linger
    return read


def test_debians_logind_leaves_a_sessions_processes_at_logout() -> None:
    props = logout.properties(DEBIAN)
    assert props == {"KillOnlyUsers": "", "KillExcludeUsers": "", "KillUserProcesses": "no"}
    assert not logout.kills(props, "alice") and not logout.kills(props, "root")


def test_kill_user_processes_spares_root_unless_excluded_users_are_named() -> None:
    killing = KILLING
    props = logout.properties(killing)
    assert logout.kills(props, "alice") and not logout.kills(props, "root")
    named = logout.properties(killing.replace("KillExcludeUsers=", "KillExcludeUsers=bob"))
    assert logout.kills(named, "root") and not logout.kills(named, "bob")
    only = logout.properties(killing.replace("KillOnlyUsers=", "KillOnlyUsers=carol dave"))
    assert logout.kills(only, "dave") and not logout.kills(only, "alice")


def test_a_user_neither_logged_in_nor_lingering_does_not_linger() -> None:
    # The guest's root over ssh without pam_systemd: show-user fails (its words on stderr).
    facts = logout.read(reader((0, DEBIAN), (1, "")), uid=1000, user="alice")
    assert facts == logout.Logind(linger=False, kills_sessions=False)
    facts = logout.read(reader((0, DEBIAN), (0, LOGGED_IN)), uid=1000, user="alice")
    assert facts == logout.Logind(linger=False, kills_sessions=False)
    facts = logout.read(reader((0, KILLING), (0, LINGERING)), uid=1000, user="alice")
    assert facts == logout.Logind(linger=True, kills_sessions=True)


def test_where_logind_does_not_answer_nothing_is_known() -> None:
    # The lab machine: loginctl is there, systemd is not PID 1 (exit 1, stdout empty).
    assert (DATA / "show-session-no-systemd.stderr").read_text().startswith("System has not")
    assert logout.read(reader((1, ""), (1, "")), uid=1000, user="alice") is None
    assert logout.warning(None, "nas") == ""


@pytest.mark.parametrize(("manager", "linger", "kill", "systemd", "warned"), [
    (True, True, "yes", True, False),     # a lingering manager: the unit outlives logout
    (True, False, "no", False, False),    # its manager stops at logout; a setsid runner stays
    (True, False, "yes", False, True),    # nothing outlives the logout: said, with the fix
    (False, True, "no", False, False),    # no manager answers (an ssh login without one)
    (False, False, "yes", False, True),
    (False, True, "yes", False, True),    # lingering, but no manager to run the unit here
])
def test_the_runner_goes_where_it_outlives_the_logout(
        manager: bool, linger: bool, kill: str, systemd: bool, warned: bool) -> None:
    facts = logout.read(reader((0, KILLING if kill == "yes" else DEBIAN),
                               (0, LINGERING if linger else LOGGED_IN)), uid=1000, user="alice")
    chosen, note = launch.launcher(lambda: manager, lambda: facts)
    assert chosen is systemd
    if warned:
        assert "it stops when you log out of" in note and "loginctl enable-linger" in note
    else:
        assert note == ""


def test_this_machine_reads_as_logind_says(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real loginctl: on the lab (systemd not PID 1) logind does not answer, and the runner
    is a setsid one with nothing to warn of; where it answers, the choice follows its facts."""
    monkeypatch.delenv(launch.LAUNCHER_ENV, raising=False)
    facts = logout.read()
    chosen, note = launch.launcher()
    if facts is None:
        assert (chosen, note) == (False, "")
    else:
        assert chosen is (facts.linger and launch.user_manager())
        assert bool(note) is (facts.kills_sessions and not chosen)
    assert logout.warning(logout.Logind(linger=True, kills_sessions=True), "nas")


def _status(state: JobState, note: str) -> Status:
    return Status(id="20261130-120000-abcdef", what="tank/t -> backup/t", request={},
                  started=0.0, state=state, note=note, launcher=launch.SETSID)


def test_a_live_jobs_note_is_said_where_it_starts_and_where_jobs_are_listed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    note = logout.warning(logout.Logind(linger=False, kills_sessions=True), "nas")
    monkeypatch.setattr(cli_jobs.runner, "start",
                        lambda what, request: _status(JobState.STARTING, note))
    args = argparse.Namespace(dry_run=False, runner=None, argv=["send", "--detach"],
                              source="tank/t@s", destination="backup/t", sudo=False,
                              sudo_source=False, sudo_destination=False, recursive=False,
                              keep_syncing=None, json=False)
    out = io.StringIO()
    cli_jobs.detach(args, "local", "local", "backup/t", out)
    assert f"  note:       {note}\n" in out.getvalue()
    assert note.startswith("it stops when you log out of nas")
    assert job_text(_status(JobState.RUNNING, note)).endswith(f"; {note}")
    # Once it ended, a logout has nothing left to stop.
    assert note not in job_text(_status(JobState.FINISHED, note))
    assert Status.from_json(_status(JobState.RUNNING, note).to_json()).note == note
    # `zmigrate jobs`: under the live job's line, not under the one that ended.
    monkeypatch.setattr(cli_jobs.runner, "jobs", lambda: [_status(JobState.RUNNING, note),
                                                          _status(JobState.FINISHED, note)])
    monkeypatch.setattr(cli_jobs.remote_jobs, "print_known", lambda args, out, line: 0)
    listed = io.StringIO()
    cli_jobs.run_jobs(argparse.Namespace(runner=None, json=False, no_scan=True), listed,
                      io.StringIO())
    assert listed.getvalue().count(f"    {note}\n") == 1
    assert listed.getvalue().splitlines()[1] == f"    {note}"
