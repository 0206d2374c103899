"""A job's record (engine/runner): events written and read back equal, old samples folded to
a bound with the recent part whole, state transitions, and how the runner is started."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from test_event_json import EXAMPLES

from zmigrate.engine.errors import CancelledError, TransferError
from zmigrate.engine.events import Failed, Finished, Progress, Sample, Side, Summary
from zmigrate.engine.runner import (
    Follower,
    JobState,
    Status,
    Writer,
    decimate,
    launch,
    place,
    read_events,
    record,
    state,
)


class Clock:
    def __init__(self, t: float = 1_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def _status(started: float = 1_000_000.0) -> Status:
    return Status(id="20261126-230000-abcdef", what="a -> b", request={"argv": []},
                  started=started, state=JobState.RUNNING, pid=os.getpid())


def _sample(t: float, side: Side = Side.SEND) -> Sample:
    return Sample(t, side, 1e6, 1e6, int(t * 1e6), 50.0)


def test_every_kind_comes_back_equal_from_the_record(tmp_path: Path) -> None:
    w = Writer(tmp_path, _status(), clock=Clock())
    for e in EXAMPLES:
        w(e)
    w.close()
    back = read_events(tmp_path)
    assert [r.event for r in back] == EXAMPLES
    assert [r.seq for r in back] == list(range(1, len(EXAMPLES) + 1))
    assert (tmp_path / record.EVENTS).read_text().count("\n") == len(EXAMPLES)


def test_old_samples_are_folded_to_a_bound_and_the_recent_part_kept_whole(
        tmp_path: Path) -> None:
    clock = Clock()
    w = Writer(tmp_path, _status(clock.t), clock=clock, compact_every=2000)
    seconds = 2 * 3600
    for i in range(seconds):  # two hours, one sample a second per side
        clock.t = 1_000_000.0 + i
        w(_sample(float(i)))
        w(_sample(float(i), Side.RECEIVE))
    w.close()
    back = read_events(tmp_path)
    assert len(back) <= decimate.bound(seconds, 2) + 2 * (decimate.RECENT + 2000)
    assert len(back) < 2 * seconds / 3
    ats = [r.at - 1_000_000.0 for r in back if r.event.side is Side.SEND]  # type: ignore[union-attr]
    recent = [a for a in ats if a >= seconds - decimate.RECENT]
    assert max(b - a for a, b in zip(recent, recent[1:], strict=False)) <= 1.0
    assert len(recent) >= decimate.RECENT - 1
    # Older: never a gap wider than the bucket there.
    for a, b in zip(ats, ats[1:], strict=False):
        assert b - a <= 2 * max(decimate.MIN_BUCKET, b / decimate.DIVISOR) + 1
    assert ats[0] < 5  # the plot still starts at the start


def test_a_week_of_samples_stays_bounded() -> None:
    lines: list[decimate.Line] = []
    for seq, t in enumerate(range(0, 7 * 86400, 2), start=1):
        lines.append(decimate.Line(seq, float(t), "sample/send/", ""))
        if seq % 20000 == 0:
            lines = decimate.compact(lines, float(t))
    lines = decimate.compact(lines, float(t))
    assert len(lines) <= decimate.bound(7 * 86400, 1) + decimate.RECENT
    assert len(lines) < 10_000


def test_a_follower_reads_from_the_first_event_across_a_compaction(tmp_path: Path) -> None:
    clock = Clock()
    w = Writer(tmp_path, _status(clock.t), clock=clock, compact_every=50)
    f = Follower(tmp_path)
    got = []
    for i in range(2000):
        clock.t = 1_000_000.0 + i
        w(_sample(float(i)))
        if i % 97 == 0:
            got += f.poll()
    w.close()
    got += f.poll()
    seqs = [r.seq for r in got]
    assert seqs == sorted(set(seqs)) and seqs[0] == 1 and seqs[-1] == 2000


def _summary(verified: bool) -> Summary:
    return Summary(100, 2.0, 50.0, 0, 1, 1 if verified else 2, None)


@pytest.mark.parametrize(("event", "stop_requested", "want"), [
    (Finished(_summary(True)), False, JobState.FINISHED),
    (Finished(_summary(False)), False, JobState.FAILED),
    (Failed(TransferError("the link went away")), False, JobState.FAILED),
    (Failed(CancelledError("cancelled"), cancelled=True), False, JobState.STOPPED),
    (Failed(TransferError("killed by the stop")), True, JobState.STOPPED),
])
def test_the_end_sets_the_final_state(tmp_path: Path, event: Finished | Failed,
                                      stop_requested: bool, want: JobState) -> None:
    clock = Clock()
    w = Writer(tmp_path, _status(), clock=clock)
    clock.t += record.STATE_EVERY  # state.json is rewritten at most this often
    w(Progress(1.0, 40, 100, 40.0, 1.5))
    s = state.read(tmp_path / record.STATE)
    assert (s.state, s.done, s.total, s.eta) == (JobState.RUNNING, 40, 100, 1.5)
    w.update(stop_requested=stop_requested)
    w(event)
    s = state.read(tmp_path / record.STATE)
    assert s.state is want and s.outcome is not None
    assert s.outcome.ok is (want is JobState.FINISHED)
    assert s.outcome.cancelled is (want is JobState.STOPPED)
    assert state.Status.from_json(s.to_json()) == s


def test_a_live_state_whose_runner_is_gone_reads_as_runner_died() -> None:
    s = _status()
    assert s.seen_by(alive=False).state is JobState.RUNNER_DIED
    assert s.seen_by(alive=True).state is JobState.RUNNING
    done = Status(**{**s.to_json(), "state": JobState.FINISHED, "outcome": None})
    assert done.seen_by(alive=False).state is JobState.FINISHED
    # This test's own pid is alive but is not that job's runner (no id in its command line).
    assert not state.pid_alive(os.getpid(), s.id)
    assert not state.pid_alive(2**22 + 12345, s.id)


def test_the_launcher_is_systemd_where_a_user_manager_answers(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(launch.LAUNCHER_ENV, raising=False)
    monkeypatch.setattr(launch.shutil, "which", lambda name: f"/usr/bin/{name}")
    asked: list[list[str]] = []

    def answers(code: int):  # type: ignore[no-untyped-def]
        def run(argv):  # type: ignore[no-untyped-def]
            asked.append(list(argv))
            return code
        return run

    assert launch.user_manager(answers(0)) is True
    assert asked[-1] == ["systemctl", "--user", "show-environment"]
    assert launch.user_manager(answers(1)) is False
    monkeypatch.setenv(launch.LAUNCHER_ENV, "setsid")
    assert launch.user_manager(answers(0)) is False
    monkeypatch.delenv(launch.LAUNCHER_ENV)
    monkeypatch.setattr(launch.shutil, "which", lambda name: None)
    assert launch.user_manager(answers(0)) is False


def test_the_systemd_run_argv_names_the_unit_after_the_job() -> None:
    job_id = "20261126-230000-abcdef"
    argv = launch.systemd_argv(job_id, {"ZMIGRATE_JOBS_DIR": "/j", "HOME": "/root",
                                        "PYTHONPATH": "/src"})
    assert argv[:6] == ["systemd-run", "--user", "--unit", f"zmigrate-job-{job_id}",
                        "--collect", "--quiet"]
    assert "--setenv=ZMIGRATE_JOBS_DIR=/j" in argv and "--setenv=PYTHONPATH=/src" in argv
    assert not any("HOME" in a for a in argv)
    assert argv[-5:] == [sys.executable, "-m", "zmigrate", "_runner", job_id]


def test_records_live_in_a_private_directory_under_the_chosen_root(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(place.JOBS_DIR_ENV, str(tmp_path / "jobs"))
    job_id = place.new_id()
    d = place.create_dir(job_id)
    assert d == tmp_path / "jobs" / job_id and (d.stat().st_mode & 0o777) == 0o700
    with pytest.raises(place.JobNotFoundError):
        place.valid_id("../../etc")


def test_the_wizards_choices_come_back_equal_through_sends_arguments() -> None:
    """A runner's request is `send`'s arguments: parsed as `send` parses them, the choices
    are the ones the wizard made."""
    from zmigrate.cli import main as cli_main
    from zmigrate.cli import send
    from zmigrate.engine.hosts.login import HostSpec
    from zmigrate.engine.plan import Options
    from zmigrate.engine.runner import request
    from zmigrate.engine.transports import Compression, Transport
    from zmigrate.engine.tree import TreeRequest

    chosen = Options(transport=Transport.SSH, force=True, readonly=False, rate_limit=1048576,
                     buffer_size=16 * 2**20, block_size=256 * 1024, compress=Compression.ZSTD,
                     properties=(("mountpoint", "none"),), exclude_properties=("quota",),
                     mount=False, stall_after=12.0, stall_timeout=90.0, verify_hash=True)
    src, dst = HostSpec("lab-src", user="root", sudo=True), HostSpec("lab-dst")
    argv = request.send_argv(src, dst, "tank/d@s1", "backup/d", chosen)
    assert argv is not None
    args = cli_main.build_parser().parse_args(argv)
    assert send._options(args) == chosen
    assert (args.source, args.destination) == ("root@lab-src:tank/d@s1", "lab-dst:backup/d")
    assert args.sudo_source and not args.sudo_destination
    tree = TreeRequest("tank/t", "backup/t", None, excludes=("tank/t/skip",), final=True,
                       options=Options(), parallel=2)
    targv = request.send_argv(src, dst, "tank/t", "backup/t", Options(), tree)
    assert targv is not None
    targs = cli_main.build_parser().parse_args(targv)
    assert targs.recursive and targs.snapshot and targs.final and targs.parallel == 2
    assert targs.exclude == ["tank/t/skip"] and send._options(targs) == Options()
    # What the CLI cannot say keeps the job in the window's process.
    assert request.send_argv(HostSpec("h", port=2222), dst, "a@b", "c", Options()) is None
    assert request.options_argv(Options(send_properties=True)) is None
