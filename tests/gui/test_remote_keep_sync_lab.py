"""A tree kept in sync on a runner host, in the wizard (issue 31): a job on lab-runner (the
lab's runner host, tests/lab/starter.py) is re-attached from the first page, and Done offers
what it offers for a job of this computer, asked of the runner host off the GUI thread:

- a kept-in-sync job: the line saying when it last synced and the final sync's window, Sync
  again and Keep in sync moot, and Final sync, which asks lab-runner for the cut-over and
  follows only the final sync to its end (the source read-only, the copy equal to it);
- a tree the wizard ran on lab-runner (Review's "Run on"): Done's Keep in sync starts the
  kept job on lab-runner (not here), and its Done offers Final sync in turn."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from lab.keep_starter import FLOOR, KeepStarterLab, keep_starter
from lab.plugin import Lab, Pool
from lab.util import snapshot_guid, wait_until, write_random_files, zfs, zmigrate
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot
from wizard_driver import start_transfer, to_review, to_source, to_tree_destination

from zmigrate.engine.runner import remote
from zmigrate.engine.runner import state as job_state
from zmigrate.engine.runner.keep import Keep
from zmigrate.engine.runner.state import JobState, Status
from zmigrate.gui.pages.base import PageId
from zmigrate.gui.wizard import MigrationWizard

pytestmark = [pytest.mark.gui, pytest.mark.lab, pytest.mark.timeout(420)]

WAIT = 120_000
TREE = ("t", "t/a")


@pytest.fixture
def starter(lab_env: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
            ) -> Iterator[KeepStarterLab]:
    """lab-runner, and this process reaching it and the lab's hosts (one ssh config and
    known_hosts holding both); the catch-up interval's floor lowered here and there."""
    with keep_starter(tmp_path / "starter", lab_env) as s:
        config = tmp_path / "ssh_config"
        config.write_text(s.ssh_config.read_text() + lab_env.ssh_config.read_text())
        known = tmp_path / "known_hosts"
        known.write_text(lab_env.known_hosts.read_text() + s.known_hosts.read_text())
        monkeypatch.setenv("ZMIGRATE_SSH_CONFIG", str(config))
        monkeypatch.setenv("ZMIGRATE_KNOWN_HOSTS", str(known))
        monkeypatch.setenv("ZMIGRATE_KEEP_SYNC_MIN", FLOOR)
        yield s


def _tree(src: Pool) -> str:
    for rel in TREE:
        zfs("create", f"{src.name}/{rel}")
        write_random_files(src.mountpoint / rel / "files", 1, files=2)
    return f"{src.name}/t"


def _there(starter: KeepStarterLab, job_id: str) -> Status:
    """The job as lab-runner's record has it."""
    return job_state.read(starter.runner_jobs / job_id / "state.json")


def _syncs(starter: KeepStarterLab, job_id: str) -> int:
    keep = Keep.of(_there(starter, job_id))
    return keep.syncs if keep is not None else 0


def _send(*args: str) -> str:
    r = zmigrate(dict(os.environ), "send", *args, "--detach", "--runner", "lab-runner",
                 "--buffer", "8M", "--json", timeout=120)
    assert r.returncode == 0, r.stderr + r.stdout
    return str(r.of("job")[0]["id"])


def _show(qtbot: QtBot, w: MigrationWizard, job_id: str) -> None:
    """Choose the job on the first page (listed once lab-runner answered), then Done."""
    panel = w.hosts_page.jobs
    panel.survey()
    qtbot.waitUntil(lambda: job_id in panel.remote and not panel.surveying, timeout=WAIT)
    row = next(i for i in range(panel.list.count())
               if panel.list.item(i).data(Qt.ItemDataRole.UserRole) == job_id)
    assert panel.list.item(row).text().endswith(" - on lab-runner")
    panel.list.setCurrentRow(row)
    panel.show_button.click()
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=WAIT)


def _cut_over(qtbot: QtBot, w: MigrationWizard, starter: KeepStarterLab, job_id: str,
              src: Pool, copy: str) -> None:
    """Final sync on Done: asked of lab-runner, followed to its end; the copy equals the
    source at the final sync's snapshot, the source read-only."""
    ui = w.done_page.ui
    assert ui.final_sync_button.isVisible() and ui.final_sync_button.isEnabled()
    for rel in TREE:
        write_random_files(src.mountpoint / rel / "last", 1, files=1)
    ui.final_sync_button.click()
    assert "Asking lab-runner" in ui.saved_label.text()  # (the GUI thread is not held)
    assert w.currentId() == PageId.DONE
    qtbot.waitUntil(lambda: w.currentId() == PageId.TRANSFER, timeout=WAIT)
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=240_000)
    assert "read-only since" in ui.reason_label.text(), ui.reason_label.text()
    ended = _there(starter, job_id)
    assert ended.state is JobState.FINISHED, ended
    keep = Keep.of(ended)
    assert keep is not None and keep.final
    plan = w.session.tree_plan
    assert plan is not None and w.session.summary is not None
    for rel in TREE:
        with pytest.raises(OSError, match="Read-only file system"):
            (src.mountpoint / rel / "after-cutover").write_bytes(b"x")
        assert snapshot_guid(f"{copy}{rel[1:]}@{plan.snapshot}") == \
            snapshot_guid(f"{src.name}/{rel}@{plan.snapshot}")


def test_final_sync_of_a_re_attached_tree_kept_in_sync_on_a_runner_host(
        qtbot: QtBot, wizard: MigrationWizard, starter: KeepStarterLab,
        pools: tuple[Pool, Pool], jobs_dir: Path) -> None:
    src, dst = pools
    copy = f"{dst.name}/copy"
    job_id = _send("-r", f"lab-src:{_tree(src)}", f"lab-dst:{copy}", "--snapshot",
                   "--keep-syncing", "3s")
    assert wait_until(lambda: _syncs(starter, job_id) >= 2, timeout=180, interval=1), \
        _there(starter, job_id)
    w = wizard
    _show(qtbot, w, job_id)
    listed = w.hosts_page.jobs.remote[job_id].status
    assert listed is not None and Keep.of(listed) is not None
    ui = w.done_page.ui
    keep = w.done_page.keep
    qtbot.waitUntil(lambda: keep.label.isVisible(), timeout=WAIT)  # lab-runner answered
    assert "last synced" in keep.label.text(), keep.label.text()
    assert "a final sync now would keep the source read-only for about" in keep.label.text()
    assert ui.keep_sync_button.isVisible() and not ui.keep_sync_button.isEnabled()
    assert not ui.sync_again_button.isEnabled()  # it syncs on its own
    assert "Sync again to send" not in ui.reason_label.text()
    _cut_over(qtbot, w, starter, job_id, src, copy)
    assert not list(jobs_dir.glob("2*"))  # nothing of it ran here: only its pointer


def test_keep_in_sync_of_a_tree_run_on_a_runner_host_from_review_keeps_it_there(
        qtbot: QtBot, wizard: MigrationWizard, starter: KeepStarterLab,
        pools: tuple[Pool, Pool], jobs_dir: Path) -> None:
    src, dst = pools
    root = _tree(src)
    w = wizard
    to_source(qtbot, w)
    to_tree_destination(qtbot, w, root, parent=dst.name, name="copy")
    to_review(qtbot, w)
    choice = w.review_page.runner
    choice.choose("lab-runner")
    qtbot.waitUntil(lambda: not choice.checking, timeout=WAIT)
    assert w.review_page.isComplete(), choice.label.text()
    start_transfer(w)
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=240_000)
    ui = w.done_page.ui
    assert "Tree copied and verified" in ui.result_label.text(), ui.reason_label.text()
    (first,) = remote.pointers()
    assert first.runner == "lab-runner" and w.session.followed_remote == first
    qtbot.waitUntil(lambda: ui.keep_sync_button.isEnabled(), timeout=WAIT)  # read there
    assert ui.sync_again_button.isEnabled() and not w.done_page.keep.label.isVisible()

    ui.keep_sync_button.click()
    dialog = w.done_page.keep.dialog
    assert dialog is not None
    dialog.setTextValue("3s")
    dialog.accept()
    assert "Asking lab-runner" in ui.saved_label.text()
    qtbot.waitUntil(lambda: w.currentId() == PageId.TRANSFER, timeout=WAIT)
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE
                    and w.done_page.keep.label.isVisible(), timeout=240_000)
    (kept,) = [p for p in remote.pointers() if p.id != first.id]
    assert kept.runner == "lab-runner"
    there = _there(starter, kept.id)  # lab-runner runs it: its record is there
    argv = there.request["argv"]
    assert "--keep-syncing" in argv and "3s" in argv and "--snapshot" in argv, argv
    assert f"lab-src:{root}" in argv, argv
    assert not list(jobs_dir.glob("2*"))  # not here
    assert wait_until(lambda: _syncs(starter, kept.id) >= 2, timeout=180, interval=1)
    qtbot.waitUntil(lambda: "last synced" in w.done_page.keep.label.text(), timeout=WAIT)
    _cut_over(qtbot, w, starter, kept.id, src, copy=f"{dst.name}/copy")
