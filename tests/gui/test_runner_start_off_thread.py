"""A transfer handed to a runner is started off the window's thread (a runner's start asks
the user's systemd and logind, whose answers the window must not wait for): the job's own
thread starts it, then follows its record; a stop asked while it starts reaches it once it
has."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from zmigrate.engine.events import Event, Progress
from zmigrate.engine.runner import Status, Writer, place
from zmigrate.engine.runner.state import JobState
from zmigrate.gui.jobs import record_job
from zmigrate.gui.jobs.record_job import RecordJob

pytestmark = pytest.mark.gui


def _started_job(procs: list[subprocess.Popen[bytes]]) -> str:
    """What a runner's start leaves: a record saying "running" (one progress), its runner a
    process that only waits."""
    job_id = place.new_id()
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", job_id])
    procs.append(proc)
    w = Writer(place.create_dir(job_id),
               Status(id=job_id, what="tank/t -> backup/t", request={"argv": []},
                      started=time.time(), state=JobState.RUNNING, pid=proc.pid))
    w(Progress(1.0, 10, 100, 10.0, 9.0))
    w.close()
    return job_id


def test_the_job_thread_starts_the_runner_and_follows_it(qtbot: QtBot,
                                                          jobs_dir: Path) -> None:
    procs: list[subprocess.Popen[bytes]] = []
    threads: list[threading.Thread] = []

    def start() -> str:
        threads.append(threading.current_thread())
        return _started_job(procs)

    job = RecordJob("", start=start)
    seen: list[Event] = []
    job.subscribe(seen.append)
    try:
        job.start()
        qtbot.waitUntil(lambda: any(isinstance(e, Progress) for e in seen), timeout=10_000)
        assert threads and threads[0] is not threading.main_thread()
        assert job.job_id and (jobs_dir / job.job_id).is_dir()
    finally:
        job.detach()
        for p in procs:
            p.kill()
            p.wait()


def test_a_stop_asked_while_the_runner_starts_reaches_it(
        qtbot: QtBot, jobs_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    procs: list[subprocess.Popen[bytes]] = []
    release = threading.Event()
    stopped: list[str] = []
    monkeypatch.setattr(record_job, "_stop_quietly", stopped.append)

    def start() -> str:
        release.wait(10)
        return _started_job(procs)

    job = RecordJob("", start=start)
    try:
        job.start()
        job.cancel()  # before the runner started: nothing to stop yet
        assert stopped == [] and job.runner_note() == ""
        release.set()
        qtbot.waitUntil(lambda: bool(stopped), timeout=10_000)
        assert stopped == [job.job_id]
    finally:
        release.set()
        job.detach()
        for p in procs:
            p.kill()
            p.wait()
