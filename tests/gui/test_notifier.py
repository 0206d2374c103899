"""When a transfer's end is worth a desktop notification, and through which channel."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from zmigrate.engine.events import Summary
from zmigrate.gui.notifier import LONG_TRANSFER, Notifier, should_notify
from zmigrate.gui.wizard import MigrationWizard

pytestmark = pytest.mark.gui


class Window(QWidget):
    """A window whose activeness the test decides (offscreen has no window manager)."""

    active = False

    def isActiveWindow(self) -> bool:  # noqa: N802 - Qt's name
        return self.active


class Calls:
    def __init__(self) -> None:
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def __call__(self, *args: Any, **kw: Any) -> bool:
        self.calls.append((args, kw))
        return True


@pytest.mark.parametrize(("seconds", "active", "expected"), [
    (30.0, False, False),  # short: the user watched it end
    (LONG_TRANSFER, False, False),  # exactly a minute is still short
    (61.0, True, False),  # long, but the window is in front
    (61.0, False, True),
    (3 * 3600.0, False, True),
])
def test_decision(seconds: float, active: bool, expected: bool) -> None:
    assert should_notify(seconds, active) is expected


def test_tray_when_there_is_one_else_notify_send(qtbot: QtBot) -> None:
    window = Window()
    qtbot.addWidget(window)
    fallback = Calls()
    with_tray = Notifier(window, tray_available=lambda: True, fallback=fallback)
    assert with_tray.transfer_ended("Transfer complete", "60 MiB", 120.0) == "tray"
    assert with_tray.tray is not None and with_tray.tray.isVisible()
    assert fallback.calls == []
    with_tray.close()

    no_tray = Notifier(window, tray_available=lambda: False, fallback=fallback)
    assert no_tray.transfer_ended("Transfer failed", "out of space", 120.0, ok=False) \
        == "notify-send"
    assert fallback.calls == [(("Transfer failed", "out of space"),
                               {"urgency": "critical", "wait": False})]
    assert no_tray.transfer_ended("Transfer complete", "x", 20.0) is None  # short
    window.active = True
    assert no_tray.transfer_ended("Transfer complete", "x", 600.0) is None  # watched
    assert len(fallback.calls) == 1


def test_wizard_words_the_notification(wizard: MigrationWizard) -> None:
    fallback = Calls()
    wizard.notifier = Notifier(Window(), tray_available=lambda: False, fallback=fallback)
    wizard.session.summary = Summary(63 * 2**20, 95.0, 63 * 2**20 / 95.0, 0, 1, 1, True)
    wizard.transfer_page.ended_after = 96.0
    assert wizard._notify_end() == "notify-send"
    (title, body), _ = fallback.calls[0]
    assert title == "Transfer complete"
    assert body == "the transfer: 63 MiB at 679.1 KiB/s, verified"
    wizard.transfer_page.ended_after = 10.0
    assert wizard._notify_end() is None


def test_a_job_that_ended_unwatched_is_announced_once_when_the_app_opens(
        qtbot: QtBot, settings: Any, jobs_dir: Any) -> None:
    """A runner's job that ended while no window was open: the next window's notifier says
    how it went (once: the window after says nothing), and the first page lists it."""
    import os
    import time

    from zmigrate.engine.errors import TransferError
    from zmigrate.engine.events import Failed, Finished
    from zmigrate.engine.runner import JobState, Status, Writer, place

    for what, end in (("tank/a -> backup/a", Finished(Summary(2**20, 3.0, 1e5, 0, 5, 5, None))),
                      ("tank/b -> backup/b", Failed(TransferError("the stream stalled")))):
        job_id = place.new_id()
        w = Writer(place.create_dir(job_id), Status(
            id=job_id, what=what, request={"argv": []}, started=time.time(),
            state=JobState.RUNNING, pid=os.getpid()))
        w(end)
        w.close()

    def opened() -> tuple[MigrationWizard, Calls]:
        wizard = MigrationWizard(settings)
        qtbot.addWidget(wizard)
        calls = Calls()
        wizard.notifier.tray_available = lambda: False
        wizard.notifier.fallback = calls
        return wizard, calls

    first, calls = opened()
    try:
        qtbot.waitUntil(lambda: len(calls.calls) == 2, timeout=5000)
        said = sorted((args[0], args[1], kw["urgency"]) for args, kw in calls.calls)
        assert said == [
            ("Transfer complete", "tank/a -> backup/a: 1 MiB, verified (it ended while "
             "zmigrate was closed)", "normal"),
            ("Transfer failed", "tank/b -> backup/b: the stream stalled", "critical")]
        texts = [first.hosts_page.jobs.list.item(i).text() for i in range(2)]
        assert "tank/a -> backup/a: finished, verified (1 MiB)" in texts
        assert "tank/b -> backup/b: failed: the stream stalled" in texts
    finally:
        first.shutdown()
    second, again = opened()
    try:
        qtbot.wait(300)
        assert again.calls == []  # told once
        assert second.hosts_page.jobs.list.count() == 2  # still news on the first page
    finally:
        second.shutdown()
