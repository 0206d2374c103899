"""The wizard chooses where the runner runs (issue 31): on Review, "Run on" another machine
(the lab's runner host, tests/lab/starter.py: its own ssh config and keys, zmigrate on its
PATH) is checked first - zmigrate there and its logins to both hosts, shown - and the transfer
then runs there; the Transfer page follows it over SSH to Done, verified. A second wizard lists
the job on its first page with its runner host (and a runner host that does not answer as
such) and re-attaches to it. A runner host without zmigrate, or one that cannot log in to the
hosts, is refused with the fix and Start stays disabled. A runner host's key passphrase is
asked once, over the window, and again where it was turned down and the job is chosen."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from lab.bring_up import running
from lab.plugin import Lab, Pool
from lab.prompts import PASSPHRASE, locked_key
from lab.starter import StarterLab
from lab.util import snapshot_guid, write_random_files, zfs
from PySide6.QtCore import QSettings, Qt
from pytestqt.qtbot import QtBot
from wizard_driver import start_transfer, to_destination, to_review, to_source

from zmigrate.engine.events import Side
from zmigrate.engine.runner import remote
from zmigrate.engine.runner.remote import Pointer
from zmigrate.gui.pages.base import PageId
from zmigrate.gui.settings import Settings
from zmigrate.gui.wizard import MigrationWizard

pytestmark = [pytest.mark.gui, pytest.mark.lab, pytest.mark.timeout(420)]

WAIT_CHECK = 60_000
WAIT_DONE = 240_000


@pytest.fixture
def starter(lab_env: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[StarterLab]:
    """The lab's runner hosts; this process reaches them and the lab's hosts (one ssh config
    and known_hosts holding both), and a runner host that does not answer (lab-runner-off)."""
    with running(StarterLab(tmp_path / "starter", lab_env)) as s:
        config = tmp_path / "ssh_config"
        config.write_text(s.ssh_config.read_text() + "Host lab-runner-off\n    HostName "
                          "127.0.0.1\n    Port 9\n    ConnectTimeout 5\n\n"
                          + lab_env.ssh_config.read_text())
        known = tmp_path / "known_hosts"
        known.write_text(lab_env.known_hosts.read_text() + s.known_hosts.read_text())
        monkeypatch.setenv("ZMIGRATE_SSH_CONFIG", str(config))
        monkeypatch.setenv("ZMIGRATE_KNOWN_HOSTS", str(known))
        yield s


def _source(pool: Pool, mb: int) -> str:
    name = f"{pool.name}/data"
    zfs("create", name)
    write_random_files(pool.mountpoint / "data", mb, files=4)
    zfs("snapshot", f"{name}@one")
    return name


def _to_review(qtbot: QtBot, w: MigrationWizard, dataset: str, parent: str, rate: str) -> None:
    to_source(qtbot, w)
    to_destination(qtbot, w, dataset)
    w.destination_page.ui.parent_edit.setText(parent)
    w.destination_page.ui.name_edit.setText("copy")
    to_review(qtbot, w, rate_limit=rate)


def _shot(w: MigrationWizard, name: str) -> None:
    """With ZMIGRATE_SCREENSHOTS=DIR, keep this state of the real run (docs/ takes them)."""
    where = os.environ.get("ZMIGRATE_SCREENSHOTS")
    if where:
        w.grab().save(str(Path(where) / f"screenshot-{name}.png"))


def test_the_transfer_runs_on_the_chosen_runner_host_and_the_first_page_lists_it(
        qtbot: QtBot, wizard: MigrationWizard, starter: StarterLab, pools: tuple[Pool, Pool],
        jobs_dir: Path, tmp_path: Path) -> None:
    src_pool, dst_pool = pools
    dataset = _source(src_pool, 24)
    w = wizard
    _to_review(qtbot, w, dataset, dst_pool.name, "1M")  # about 25 s: time to re-attach
    review, choice = w.review_page, w.review_page.runner
    assert [choice.combo.itemText(i) for i in range(choice.combo.count())] == [
        "This computer", "lab-src (the source)", "lab-dst (the destination)",
        "Another machine…"]
    choice.choose("lab-runner")
    assert choice.checking and not review.isComplete()  # Start waits for the check
    assert not w.button(w.WizardButton.CommitButton).isEnabled()
    qtbot.waitUntil(lambda: not choice.checking, timeout=WAIT_CHECK)
    said = choice.label.text()
    assert review.isComplete(), said
    assert "<b>lab-runner runs the transfer</b> (zmigrate at /" in said, said
    for host in ("lab-src", "lab-dst"):  # how lab-runner logs in to each, with its own setup
        assert f"logs in to {host} as root@127.0.0.1:" in said, said
    assert str(starter.lab.identity) in said and str(starter.lab.ssh_config) in said
    _shot(w, "review-runner")
    start_transfer(w)

    pointers = jobs_dir / remote.POINTERS
    qtbot.waitUntil(lambda: any(pointers.glob("*.json")), timeout=WAIT_CHECK)
    (pointer,) = remote.pointers()
    assert pointer.runner == "lab-runner"
    assert (starter.runner_jobs / pointer.id / "state.json").is_file()  # the record is there
    assert not (jobs_dir / pointer.id).exists()  # here only the pointer
    remote.save_pointer(Pointer("20261127-000000-00ab00", "lab-runner-off", "/usr/bin/zmigrate",
                                "tank/x -> backup/x", time.time()))

    other = _second_window(qtbot, tmp_path)
    try:
        panel = other.hosts_page.jobs
        qtbot.waitUntil(lambda: len(panel.remote) == 2, timeout=WAIT_CHECK)
        assert not panel.isHidden()
        texts = [panel.list.item(i).text() for i in range(panel.list.count())]
        (ours,) = [i for i, t in enumerate(texts) if t.endswith(" - on lab-runner")]
        assert f"lab-src:{dataset}@one -> lab-dst:{dst_pool.name}/copy: " in texts[ours], texts
        assert any(state in texts[ours] for state in (": running", ": starting")), texts
        (off,) = [t for t in texts if "lab-runner-off" in t]
        assert "tank/x -> backup/x: on lab-runner-off, which does not answer now (" in off
        panel.list.setCurrentRow(ours)
        panel.show_button.click()
        assert other.currentId() == PageId.TRANSFER
        qtbot.waitUntil(lambda: other.currentId() == PageId.DONE, timeout=WAIT_DONE)
        assert "verified" in other.done_page.ui.result_label.text()
    finally:
        other.shutdown()

    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=WAIT_DONE)
    assert w.session.summary is not None, w.done_page.ui.reason_label.text()
    assert "verified" in w.done_page.ui.result_label.text()
    assert w.session.store is not None and len(w.session.store.data(Side.SEND).t) > 5
    assert snapshot_guid(f"{dst_pool.name}/copy@one") == snapshot_guid(f"{dataset}@one")
    # The runner host shows it as watched now: the first page no longer lists it.
    w.hosts_page.jobs.survey()
    qtbot.waitUntil(lambda: not w.hosts_page.jobs.surveying, timeout=WAIT_CHECK)
    assert pointer.id not in w.hosts_page.jobs.remote


def test_a_runner_host_without_zmigrate_or_logins_is_refused_with_the_fix(
        qtbot: QtBot, wizard: MigrationWizard, starter: StarterLab,
        pools: tuple[Pool, Pool]) -> None:
    src_pool, dst_pool = pools
    w = wizard
    _to_review(qtbot, w, _source(src_pool, 1), dst_pool.name, "")
    review, choice = w.review_page, w.review_page.runner
    choice.choose("lab-runner-bare")
    qtbot.waitUntil(lambda: not choice.checking, timeout=WAIT_CHECK)
    said = choice.label.text()
    assert "zmigrate is not installed on lab-runner-bare" in said, said
    assert "Fix: Install the command line there: `pipx install zmigrate`" in said, said
    assert not review.isComplete()
    assert not w.button(w.WizardButton.CommitButton).isEnabled()

    choice.choose("lab-runner-lost")  # zmigrate there, but it knows no host key of the lab's
    qtbot.waitUntil(lambda: not choice.checking, timeout=WAIT_CHECK)
    said = choice.label.text()
    assert "lab-runner-lost cannot log in to lab-src" in said, said
    assert "make `ssh lab-src` work on lab-runner-lost" in said, said
    assert not review.isComplete()

    choice.choose(None)  # this computer: no check, Start at once
    assert review.isComplete() and not choice.checking
    assert w.session.runner_check is None


def _running_on_lab_runner(qtbot: QtBot, w: MigrationWizard, pools: tuple[Pool, Pool],
                           rate: str) -> Pointer:
    """24 MiB sent at `rate` with lab-runner chosen on Review, followed on the Transfer page
    once its samples come; its pointer."""
    src_pool, dst_pool = pools
    _to_review(qtbot, w, _source(src_pool, 24), dst_pool.name, rate)
    choice = w.review_page.runner
    choice.choose("lab-runner")
    qtbot.waitUntil(lambda: not choice.checking, timeout=WAIT_CHECK)
    assert w.review_page.isComplete(), choice.label.text()
    start_transfer(w)
    qtbot.waitUntil(lambda: w.session.store is not None and w.session.store.version > 2,
                    timeout=WAIT_DONE)
    (pointer,) = remote.pointers()
    return pointer


def _stop(w: MigrationWizard) -> None:
    """Stop transfer…, confirmed."""
    page = w.transfer_page
    page.ui.stop_button.click()
    assert page.confirm_box is not None
    next(b for b in page.confirm_box.buttons() if b.text() == "Stop transfer").click()


def test_stop_on_the_transfer_page_stops_the_job_on_its_runner_host(
        qtbot: QtBot, wizard: MigrationWizard, starter: StarterLab,
        pools: tuple[Pool, Pool]) -> None:
    w = wizard
    pointer = _running_on_lab_runner(qtbot, w, pools, "1M")
    _stop(w)
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=WAIT_DONE)
    assert "stopped" in w.done_page.ui.result_label.text(), w.done_page.ui.result_label.text()
    state = json.loads((starter.runner_jobs / pointer.id / "state.json").read_text())
    assert state["state"] == "stopped", state  # stopped there, by its runner


def test_the_transfer_page_outlasts_a_lost_session_and_a_stop_asked_meanwhile_reaches_it(
        qtbot: QtBot, wizard: MigrationWizard, starter: StarterLab,
        pools: tuple[Pool, Pool]) -> None:
    """lab-runner drops the window's session mid-transfer and answers no login for a while:
    the stage line says the window is out of touch (the job goes on there), Stop clicked
    meanwhile cannot reach lab-runner, and once it answers again the page logs in by itself,
    asks again, and the job ends stopped there."""
    w = wizard
    # 24 MiB at 128 KiB/s: three minutes, more than the page is out of touch (each failed
    # login waits for a banner that does not come) and back.
    pointer = _running_on_lab_runner(qtbot, w, pools, "128k")
    page = w.transfer_page
    label, log = page.ui.stage_label, page.ui.log_edit

    def failed_tries() -> int:
        return sum("(cannot log in to the runner host lab-runner" in line
                   for line in log.toPlainText().splitlines())

    with starter.deaf("lab-runner"):
        qtbot.waitUntil(lambda: label.text().startswith("Out of touch with lab-runner for "),
                        timeout=WAIT_CHECK)
        assert label.text().endswith("the job goes on there; trying again every 2 s"), \
            label.text()
        qtbot.waitUntil(lambda: failed_tries() >= 1, timeout=WAIT_CHECK)
        _shot(w, "transfer-out-of-touch")
        _stop(w)
        tried = failed_tries()
        # Two more of the page's own tries fail after the click: the stop's login, begun
        # with the first of them, has failed too.
        qtbot.waitUntil(lambda: failed_tries() >= tried + 2, timeout=2 * WAIT_CHECK)
        assert w.currentId() == PageId.TRANSFER
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=WAIT_DONE)
    assert "Back in touch with lab-runner after " in log.toPlainText()
    assert "stopped" in w.done_page.ui.result_label.text(), w.done_page.ui.result_label.text()
    state = json.loads((starter.runner_jobs / pointer.id / "state.json").read_text())
    assert state["state"] == "stopped", state  # stopped there, by its runner, once asked again


def test_a_runner_hosts_passphrase_is_asked_once_over_the_window(
        qtbot: QtBot, wizard: MigrationWizard, starter: StarterLab, pools: tuple[Pool, Pool],
        lab_env: Lab, tmp_path: Path) -> None:
    """lab-runner's key has a passphrase (no agent): Review's check asks it in a dialog over
    the window, and the start there, the following and Done's read of the job there ask
    nothing again."""
    src_pool, dst_pool = pools
    w = wizard
    asked: list[str] = []
    w.window_logins.relay.secret_asked.connect(lambda prompt, _fut: asked.append(prompt))
    with _runner_key_locked(starter, lab_env, tmp_path) as key:
        _to_review(qtbot, w, _source(src_pool, 8), dst_pool.name, "")
        choice = w.review_page.runner
        choice.choose("lab-runner")
        dialogs = w.window_logins.dialogs
        qtbot.waitUntil(lambda: dialogs.secret_dialog is not None, timeout=WAIT_CHECK)
        assert dialogs.secret_dialog is not None
        assert "lab-runner" in dialogs.secret_dialog.labelText() or str(key) in \
            dialogs.secret_dialog.labelText(), dialogs.secret_dialog.labelText()
        dialogs.answer_secret(PASSPHRASE)
        qtbot.waitUntil(lambda: not choice.checking, timeout=WAIT_CHECK)
        assert w.review_page.isComplete(), choice.label.text()
        start_transfer(w)
        qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=WAIT_DONE)
        assert "verified" in w.done_page.ui.result_label.text(), \
            w.done_page.ui.reason_label.text()
        # Done reads the job there again, on its timer: with what was answered, asking nothing.
        keep = w.done_page.keep
        qtbot.waitUntil(lambda: w.session.remote_status is not None and keep.reading is None,
                        timeout=WAIT_CHECK)
        w.shutdown()  # it starts no read of lab-runner after this ...
        jobs = w.hosts_page.jobs  # ... and one under way ends while the key still opens it
        qtbot.waitUntil(lambda: not jobs.surveying and keep.reading is None, timeout=WAIT_CHECK)
    (pointer,) = remote.pointers()
    assert pointer.runner == "lab-runner"
    assert len(asked) == 1, asked


def test_a_runner_host_whose_question_was_turned_down_is_asked_again_on_show(
        qtbot: QtBot, wizard: MigrationWizard, starter: StarterLab, pools: tuple[Pool, Pool],
        lab_env: Lab, tmp_path: Path) -> None:
    """A second window opens while a job runs on lab-runner, whose key has a passphrase: its
    first page asks it, the user turns it down, and the job is listed as not answering, with
    why. Show transfer asks again; answered, the job is shown, to Done."""
    src_pool, dst_pool = pools
    w = wizard
    with _runner_key_locked(starter, lab_env, tmp_path):
        _to_review(qtbot, w, _source(src_pool, 24), dst_pool.name, "1M")  # about 25 s
        w.review_page.runner.choose("lab-runner")
        _answer(qtbot, w, PASSPHRASE)
        qtbot.waitUntil(lambda: not w.review_page.runner.checking, timeout=WAIT_CHECK)
        start_transfer(w)
        qtbot.waitUntil(lambda: w.session.store is not None and w.session.store.version > 2,
                        timeout=WAIT_DONE)
        (pointer,) = remote.pointers()

        other = _second_window(qtbot, tmp_path)
        try:
            panel = other.hosts_page.jobs
            _answer(qtbot, other, None)  # turned down as the window opens
            qtbot.waitUntil(lambda: pointer.id in panel.remote, timeout=WAIT_CHECK)
            assert panel.remote[pointer.id].status is None
            (row,) = [i for i in range(panel.list.count())
                      if panel.list.item(i).data(Qt.ItemDataRole.UserRole) == pointer.id]
            said = panel.list.item(row).text()
            assert "which does not answer now (" in said and "passphrase" in said, said
            assert "Show transfer tries again" in said, said
            panel.list.setCurrentRow(row)
            panel.show_button.click()
            _answer(qtbot, other, PASSPHRASE)
            qtbot.waitUntil(lambda: other.currentId() == PageId.TRANSFER, timeout=WAIT_CHECK)
            qtbot.waitUntil(lambda: other.currentId() == PageId.DONE, timeout=WAIT_DONE)
            assert "verified" in other.done_page.ui.result_label.text()
            keep = other.done_page.keep
            qtbot.waitUntil(lambda: not panel.surveying and keep.reading is None,
                            timeout=WAIT_CHECK)
        finally:
            other.shutdown()
        qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=WAIT_DONE)
        w.shutdown()  # its reads of lab-runner end while the key still opens it
        jobs, keep = w.hosts_page.jobs, w.done_page.keep
        qtbot.waitUntil(lambda: not jobs.surveying and keep.reading is None, timeout=WAIT_CHECK)
    assert snapshot_guid(f"{dst_pool.name}/copy@one") == snapshot_guid(
        f"{src_pool.name}/data@one")


def _answer(qtbot: QtBot, w: MigrationWizard, secret: str | None) -> None:
    """Answer the window's next passphrase question (None: Cancel)."""
    dialogs = w.window_logins.dialogs
    qtbot.waitUntil(lambda: dialogs.secret_dialog is not None, timeout=WAIT_CHECK)
    dialogs.answer_secret(secret)


def _second_window(qtbot: QtBot, tmp_path: Path) -> MigrationWizard:
    """Another wizard of this computer (its own settings), shown: a window opened later."""
    other = MigrationWizard(Settings(QSettings(str(tmp_path / "other.ini"),
                                               QSettings.Format.IniFormat)))
    qtbot.addWidget(other)
    other.show()
    return other


@contextlib.contextmanager
def _runner_key_locked(starter: StarterLab, lab_env: Lab, tmp_path: Path) -> Iterator[Path]:
    """The runner hosts reached with a key that has PASSPHRASE (no agent) until the block
    ends: this process's ssh config (the starter fixture's) names it instead."""
    with locked_key(tmp_path / "id_locked", starter.lab.identity.parent / "authorized_keys") \
            as key:
        Path(os.environ["ZMIGRATE_SSH_CONFIG"]).write_text(
            starter.ssh_config.read_text().replace(f"IdentityFile {starter.lab.identity}\n",
                                                   f"IdentityFile {key}\n")
            + lab_env.ssh_config.read_text())
        yield key
