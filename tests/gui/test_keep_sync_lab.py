"""Done's Final sync on a re-attached tree, on the lab: a tree kept in sync by a runner (the
CLI's `send --keep-syncing`) is shown by a wizard that did not start it (its first page says
when it last synced and the final sync's window); Done offers Final sync (Sync again and Keep
in sync are moot while it repeats), and Final sync stops the repetition and cuts over: the
source is read-only and the copy's files equal the source's. A finished tree re-attached to
gets Sync again, which runs the same tree's catch-up in a runner of its own, and Keep in sync,
which asks the interval and keeps it in sync until Final sync."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lab.plugin import Lab, Pool
from lab.util import tree_digest, wait_until, write_random_files, zfs, zmigrate
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from zmigrate.engine import runner
from zmigrate.engine.runner.keep import Keep
from zmigrate.engine.runner.state import JobState
from zmigrate.gui.pages.base import PageId
from zmigrate.gui.wizard import MigrationWizard

pytestmark = [pytest.mark.gui, pytest.mark.lab, pytest.mark.timeout(480)]

CHILDREN = ("a", "b")


def _syncs(job_id: str) -> int:
    keep = Keep.of(runner.status(job_id))
    return keep.syncs if keep is not None else 0


def _show(qtbot: QtBot, w: MigrationWizard, job_id: str) -> None:
    panel = w.hosts_page.jobs
    panel.refresh()
    row = next(i for i in range(panel.list.count())
               if panel.list.item(i).data(Qt.ItemDataRole.UserRole) == job_id)
    panel.list.setCurrentRow(row)
    panel.show_button.click()
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=120_000)


def test_final_sync_on_a_re_attached_kept_tree_cuts_over(
        qtbot: QtBot, wizard: MigrationWizard, lab_env: Lab, pools: tuple[Pool, Pool],
        tmp_path: Path, jobs_dir: Path) -> None:
    src, dst = pools
    root = f"{src.name}/t"
    for rel in ("t", *(f"t/{c}" for c in CHILDREN)):
        zfs("create", f"{src.name}/{rel}")
        write_random_files(src.mountpoint / rel / "files", 2, files=2)
    copy = f"{dst.name}/copy"
    env = {**os.environ, "ZMIGRATE_KEEP_SYNC_MIN": "1"}
    r = zmigrate(env, "send", "-r", f"lab-src:{root}", f"lab-dst:{copy}", "--snapshot",
                 "--detach", "--keep-syncing", "3s", "--buffer", "8M", timeout=60)
    assert r.returncode == 0, r.stderr + r.stdout
    job_id = r.stdout.split()[2].rstrip(":")
    assert wait_until(lambda: _syncs(job_id) >= 2, timeout=180, interval=1), \
        runner.status(job_id)

    w = wizard
    panel = w.hosts_page.jobs
    panel.refresh()
    assert "last synced" in panel.list.item(0).text()
    assert "a final sync now would keep the source read-only for about" \
        in panel.list.item(0).text()
    _show(qtbot, w, job_id)
    ui = w.done_page.ui
    assert "Tree copied and verified" in ui.result_label.text()
    assert ui.final_sync_button.isVisible() and ui.final_sync_button.isEnabled()
    assert ui.keep_sync_button.isVisible() and not ui.keep_sync_button.isEnabled()
    assert not ui.sync_again_button.isEnabled()  # it syncs on its own
    assert "last synced" in w.done_page.keep.label.text()

    for c in CHILDREN:
        write_random_files(src.mountpoint / "t" / c / "last", 1, files=1)
    ui.final_sync_button.click()
    qtbot.waitUntil(lambda: w.currentId() == PageId.TRANSFER, timeout=30_000)
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=240_000)
    assert "read-only since" in ui.reason_label.text(), ui.reason_label.text()
    status = runner.status(job_id)
    assert status.state is JobState.FINISHED, status
    keep = Keep.of(status)
    assert keep is not None and keep.final
    assert not ui.sync_again_button.isHidden()  # the job ended: Sync again runs a new one
    for rel in ("t", *(f"t/{c}" for c in CHILDREN)):
        with pytest.raises(OSError, match="Read-only file system"):
            (src.mountpoint / rel / "after-cutover").write_bytes(b"x")
        name = copy + rel[1:]
        where = tmp_path / "copy" / rel
        zfs("set", f"mountpoint={where}", name)
        if zfs("get", "-H", "-o", "value", "mounted", name).strip() != "yes":
            zfs("mount", name)
        theirs, ours = tree_digest(src.mountpoint / rel), tree_digest(where)
        if rel == "t":
            theirs = {k: v for k, v in theirs.items() if k.split("/")[0] not in CHILDREN}
            ours = {k: v for k, v in ours.items() if k.split("/")[0] not in CHILDREN}
        assert ours == theirs and ours, rel


def test_sync_again_then_keep_in_sync_on_a_re_attached_finished_tree(
        qtbot: QtBot, wizard: MigrationWizard, lab_env: Lab, pools: tuple[Pool, Pool],
        jobs_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src, dst = pools
    root = f"{src.name}/t"
    for rel in ("t", "t/a"):
        zfs("create", f"{src.name}/{rel}")
        write_random_files(src.mountpoint / rel / "files", 1, files=2)
    zfs("snapshot", "-r", f"{root}@s1")
    copy = f"{dst.name}/copy"
    r = zmigrate(dict(os.environ), "send", "-r", f"lab-src:{root}@s1", f"lab-dst:{copy}",
                 "--detach", "--buffer", "8M", timeout=60)
    assert r.returncode == 0, r.stderr + r.stdout
    first = r.stdout.split()[2].rstrip(":")
    assert wait_until(lambda: runner.status(first).state.final, timeout=180, interval=1)
    assert runner.status(first).state is JobState.FINISHED

    w = wizard
    _show(qtbot, w, first)
    ui = w.done_page.ui
    assert ui.sync_again_button.isVisible() and ui.sync_again_button.isEnabled()
    assert ui.keep_sync_button.isVisible() and ui.keep_sync_button.isEnabled()
    write_random_files(src.mountpoint / "t" / "a" / "more", 1, files=1)
    ui.sync_again_button.click()
    qtbot.waitUntil(lambda: w.currentId() == PageId.TRANSFER, timeout=30_000)
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=240_000)
    assert "Tree copied and verified" in ui.result_label.text(), ui.reason_label.text()
    again = [s for s in runner.jobs() if s.id != first]
    assert len(again) == 1 and again[0].state is JobState.FINISHED
    argv = again[0].request["argv"]
    assert f"lab-src:{root}" in argv and "--snapshot" in argv and "--final" not in argv
    snap = zfs("list", "-H", "-t", "snapshot", "-o", "name", "-s", "createtxg", "-r",
               f"{root}/a").split()[-1].split("@")[1]
    assert snap != "s1"
    assert zfs("get", "-Hp", "-o", "value", "guid", f"{copy}/a@{snap}") == \
        zfs("get", "-Hp", "-o", "value", "guid", f"{root}/a@{snap}")

    # Keep in sync: the interval asked, the job kept in sync, then its final sync.
    monkeypatch.setenv("ZMIGRATE_KEEP_SYNC_MIN", "1")  # the runner inherits it
    ui.keep_sync_button.click()
    dialog = w.done_page.keep.dialog
    assert dialog is not None and dialog.textValue() == "15m"
    dialog.setTextValue("3s")
    dialog.accept()
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE
                    and w.done_page.keep.label.isVisible(), timeout=240_000)
    kept = next(s for s in runner.jobs() if Keep.of(s) is not None)
    assert "--keep-syncing" in kept.request["argv"]
    assert wait_until(lambda: _syncs(kept.id) >= 2, timeout=180, interval=1)
    w.done_page.keep.refresh()
    assert "last synced" in w.done_page.keep.label.text()
    ui.final_sync_button.click()
    qtbot.waitUntil(lambda: w.currentId() == PageId.TRANSFER, timeout=30_000)
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=240_000)
    assert "read-only since" in ui.reason_label.text(), ui.reason_label.text()
    assert runner.status(kept.id).state is JobState.FINISHED
