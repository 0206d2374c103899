"""A job whose runner is another machine, followed while the session to it is lost: the
Transfer page's stage line says so (for how long, once a second; the job goes on there), the
log keeps each failed try's reason, the progress line's figures are said to be from before, a
stage that comes meanwhile is kept for later, and when touch is back the line is the job's
stage again (the engine's side: tests/e2e/test_remote_runner.py, a real session dropped; the
whole page: tests/gui/test_runner_choice_lab.py)."""

from __future__ import annotations

import time

import pytest
from pytestqt.qtbot import QtBot

from zmigrate.engine.events import OutOfTouch, Progress, StageChanged
from zmigrate.gui.job_bridge import JobBridge
from zmigrate.gui.pages.transfer_page import TransferPage
from zmigrate.gui.session import Session

pytestmark = pytest.mark.gui


def test_the_stage_line_says_out_of_touch_and_then_the_stage_again(
        qtbot: QtBot, pages: tuple[Session, TransferPage, object, JobBridge]) -> None:
    _session, transfer, _done, bridge = pages
    label, log = transfer.ui.stage_label, transfer.ui.log_edit
    bridge.on_event(StageChanged("sending", "tank/data@one"))
    qtbot.waitUntil(lambda: label.text() == "Sending: tank/data@one")
    lost_at = time.time() - 65
    bridge.on_event(OutOfTouch("nas", lost_at, "", 2.0))
    qtbot.waitUntil(lambda: label.text().startswith("Out of touch with nas for "))
    assert _seconds(label.text(), "for ") in _since(lost_at, 65), label.text()
    assert label.text().endswith(" s: the job goes on there; trying again every 2 s")
    assert label.property("role") == "alert"  # amber
    bridge.on_event(OutOfTouch("nas", lost_at, "cannot log in to the runner host nas: "
                               "timed out", 5.0))
    bridge.on_event(StageChanged("verifying", ""))  # read from the record before the loss
    qtbot.waitUntil(lambda: "every 5 s" in label.text())
    assert "cannot log in" not in label.text()  # the line stays short; the log has it
    assert ("(cannot log in to the runner host nas: timed out): the job goes on there"
            in log.toPlainText())
    bridge.on_event(Progress(3.0, 2**20, 2**24, 2**17, None))
    transfer._show_progress()
    assert transfer.ui.progress_label.text().startswith(
        "When touch was lost: 1 MiB of 16 MiB written"), transfer.ui.progress_label.text()
    time.sleep(1.1)
    transfer._show_progress()  # the page's second tick: how long, now
    assert _seconds(label.text(), "for ") in _since(lost_at, 66), label.text()
    bridge.on_event(OutOfTouch("nas", lost_at, back=True))
    qtbot.waitUntil(lambda: not label.text().startswith("Out of touch"))
    assert label.text() == "Verifying" and label.property("role") == "value"
    transfer._show_progress()
    assert transfer.ui.progress_label.text().startswith("1 MiB of 16 MiB written")
    last = log.toPlainText().splitlines()[-1]
    assert last.startswith("Back in touch with nas after "), last
    assert last.endswith(" s; the job went on there"), last
    assert _seconds(last, "after ") in _since(lost_at, 66), last


def _seconds(text: str, before: str) -> int:
    """The whole seconds a line says, after `before`."""
    return int(text.split(before, 1)[1].split(" s", 1)[0])


def _since(lost_at: float, least: int) -> range:
    """From `least` to the whole seconds since `lost_at` now: a loaded machine may render a
    line a second or more after its event."""
    return range(least, int(time.time() - lost_at) + 1)
