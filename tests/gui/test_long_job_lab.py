"""A wizard killed outright (SIGKILL) mid-transfer: the transfer, handed to a runner, goes on
and completes; a new wizard lists it on its first page and shows it whole (the plot since the
start, the tree's table, the outcome), then Done."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lab.plugin import Lab, Pool
from lab.util import snapshot_guid, wait_until, write_random_files, zfs
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from zmigrate.engine import runner
from zmigrate.engine.events import Sample, Side
from zmigrate.engine.readings.samples import SampleStore
from zmigrate.engine.runner.state import JobState
from zmigrate.gui.job_bridge import JobBridge
from zmigrate.gui.jobs.record_job import RecordJob
from zmigrate.gui.pages.base import PageId
from zmigrate.gui.pages.transfer_page import DETACHED
from zmigrate.gui.settings import Settings
from zmigrate.gui.wizard import MigrationWizard

pytestmark = [pytest.mark.gui, pytest.mark.lab, pytest.mark.timeout(420)]

DRIVER = Path(__file__).parent / "long_job_driver.py"


def test_a_killed_wizard_leaves_the_transfer_running_and_a_new_one_shows_it_whole(
        qtbot: QtBot, lab_env: Lab, pools: tuple[Pool, Pool], tmp_path: Path,
        jobs_dir: Path) -> None:
    src, dst = pools
    root = f"{src.name}/t"
    names = [root, f"{root}/a", f"{root}/b"]
    for name in names:
        zfs("create", name)
    for name in names:
        write_random_files(src.mountpoint / name.split("/", 1)[1] / "files", 5, files=2)
    ini = tmp_path / "driver.ini"
    driver_settings = Settings(QSettings(str(ini), QSettings.Format.IniFormat))
    driver_settings.set_value(DETACHED, True)  # the default; the test fixtures turn it off
    driver_settings.sync()
    proc = subprocess.Popen([sys.executable, str(DRIVER), root, dst.name, str(ini), "1M"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, env=dict(os.environ))
    assert proc.stdout is not None
    job_id = ""
    for line in proc.stdout:
        if line.startswith("JOB "):
            job_id = line.split()[1]
            break
    if not job_id:
        proc.wait(timeout=30)
        pytest.fail(f"the wizard started no runner job: {proc.stderr.read()[-3000:]}")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    killed_at = time.time()
    assert runner.status(job_id).state is JobState.RUNNING

    assert wait_until(lambda: runner.status(job_id).state.final, timeout=240, interval=1)
    status = runner.status(job_id)
    assert status.state is JobState.FINISHED, status
    plan_snapshot = next(r.event.plan.snapshot for r in runner.read_events(jobs_dir / job_id)
                         if type(r.event).__name__ == "TreePlanReady")  # type: ignore[attr-defined]
    for name in names:
        copy = name.replace(root, f"{dst.name}/copy", 1)
        assert snapshot_guid(f"{copy}@{plan_snapshot}") == snapshot_guid(f"{name}@{plan_snapshot}")

    settings = Settings(QSettings(str(tmp_path / "new.ini"), QSettings.Format.IniFormat))
    w = MigrationWizard(settings)
    qtbot.addWidget(w)
    w.show()
    try:
        panel = w.hosts_page.jobs
        assert not panel.isHidden()
        assert panel.list.count() == 1 and "finished, verified" in panel.list.item(0).text()
        panel.list.setCurrentRow(0)
        panel.show_button.click()
        qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=60_000)
        assert "verified" in w.done_page.ui.result_label.text()
        states = w.transfer_page.datasets.states()
        assert states == dict.fromkeys(names, "verified"), states
        # The whole plot: what a live page fed with the whole record plots (a tree's plots
        # follow one dataset in flight at a time), from before and after the kill.
        record = runner.read_events(jobs_dir / job_id)
        live = JobBridge(RecordJob(job_id), SampleStore())
        for r in record:
            live.on_event(r.event)
        want = [float(t) for t in live.store.data(Side.SEND).t]
        xs, _ = w.transfer_page.plots.rates.send.getData()
        assert xs is not None and list(xs) == pytest.approx(want)
        at = {r.event.t: r.at for r in record
              if isinstance(r.event, Sample) and r.event.side is Side.SEND}
        plotted = [at[t] for t in want if t in at]
        assert len(plotted) == len(want) > 10
        assert min(plotted) < killed_at < max(plotted)
        assert runner.status(job_id).watched  # shown: no longer news on the first page
        panel.refresh()
        assert panel.isHidden()
    finally:
        w.shutdown()
