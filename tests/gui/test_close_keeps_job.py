"""Closing the wizard while a job a runner owns goes on asks Keep it running / Stop it: Keep
(the default) closes the window and leaves the job alone; Stop stops it, then closes."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from zmigrate.engine import runner
from zmigrate.engine.events import Progress
from zmigrate.engine.readings.samples import SampleStore
from zmigrate.engine.runner import Status, Writer, logout, place
from zmigrate.engine.runner.state import JobState
from zmigrate.gui.dialogs.confirm import KEEP_RUNNING
from zmigrate.gui.job_bridge import JobBridge
from zmigrate.gui.jobs.record_job import RecordJob
from zmigrate.gui.wizard import MigrationWizard

pytestmark = pytest.mark.gui


def _running_job(jobs_dir: Path, note: str = "") -> tuple[str, subprocess.Popen[bytes]]:
    """A record saying "running", its runner a process that only waits (its command line
    names the job, as a runner's does); `note`: what its start said of its runner."""
    job_id = place.new_id()
    directory = place.create_dir(job_id)
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", job_id])
    w = Writer(directory, Status(id=job_id, what="tank/t -> backup/t", request={"argv": []},
                                 started=time.time(), state=JobState.RUNNING, pid=proc.pid,
                                 note=note))
    w(Progress(1.0, 10, 100, 10.0, 9.0))
    w.close()
    return job_id, proc


def _close(qtbot: QtBot, wizard: MigrationWizard, job_id: str) -> QMessageBox:
    bridge = JobBridge(RecordJob(job_id), SampleStore(), wizard.transfer_page)
    wizard.transfer_page.attach(bridge)
    bridge.start()
    wizard.done(0)
    box = wizard.close_box
    assert box is not None
    assert box.defaultButton().text() == KEEP_RUNNING
    return box


def test_keep_it_running_closes_the_window_and_leaves_the_job(
        qtbot: QtBot, wizard: MigrationWizard, jobs_dir: Path) -> None:
    job_id, proc = _running_job(jobs_dir)
    try:
        box = _close(qtbot, wizard, job_id)
        box.defaultButton().click()
        qtbot.waitUntil(lambda: not wizard.isVisible(), timeout=5000)
        time.sleep(0.5)
        assert proc.poll() is None  # the runner goes on
        assert runner.status(job_id).state is JobState.RUNNING
    finally:
        proc.kill()
        proc.wait()


def test_stop_it_stops_the_job_then_closes(qtbot: QtBot, wizard: MigrationWizard,
                                           jobs_dir: Path) -> None:
    job_id, proc = _running_job(jobs_dir)
    try:
        box = _close(qtbot, wizard, job_id)
        stop = next(b for b in box.buttons() if b.text() == "Stop it")
        stop.click()
        qtbot.waitUntil(lambda: proc.poll() is not None, timeout=10_000)  # signalled
        qtbot.waitUntil(lambda: not wizard.isVisible(), timeout=10_000)
        assert wizard.session.error is not None
    finally:
        proc.kill()
        proc.wait()


def test_a_job_a_logout_would_stop_says_so_as_the_window_closes(
        qtbot: QtBot, wizard: MigrationWizard, jobs_dir: Path) -> None:
    note = logout.warning(logout.Logind(linger=False, kills_sessions=True), "nas")
    job_id, proc = _running_job(jobs_dir, note)
    try:
        box = _close(qtbot, wizard, job_id)
        assert box.text().endswith(f"But {note}.")
        assert "loginctl enable-linger" in box.text()
        box.defaultButton().click()
        qtbot.waitUntil(lambda: not wizard.isVisible(), timeout=5000)
    finally:
        proc.kill()
        proc.wait()
    # A job whose runner outlives a logout says nothing of it.
    quiet, proc = _running_job(jobs_dir)
    proc.kill()
    proc.wait()
    assert RecordJob(quiet).runner_note() == ""
