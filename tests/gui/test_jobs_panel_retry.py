"""The first page's list of remote jobs (gui/jobs/panel.py): a job whose runner host did not
answer is listed with why, and choosing it logs in again, asking this time, then shows it
once its host answers; a quiet survey already under way is followed by the asking one.
(The runner hosts' answers here are the engine's `Seen` values; the lab's own runner host
plays the whole of it in test_runner_choice_lab.py.)"""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from zmigrate.engine.hosts.login import Prompts
from zmigrate.engine.hosts.remembered import SessionLogins
from zmigrate.engine.runner.elsewhere import Seen
from zmigrate.engine.runner.remote import Pointer
from zmigrate.engine.runner.state import JobState, Status
from zmigrate.gui.jobs import panel as panel_module
from zmigrate.gui.jobs.panel import JobsPanel

P = Pointer("20261128-120000-00ab00", "nas", "/usr/bin/zmigrate", "tank/a -> b/a", 0.0)
ANSWERED = Seen(P, Status(P.id, P.what, {}, 0.0, JobState.RUNNING))
SILENT = Seen(P, None, "cannot log in to the runner host nas: the key needs a passphrase and "
                       "none was given")


class Asking(Prompts):
    pass


def test_a_job_whose_host_did_not_answer_is_shown_once_an_asking_login_reaches_it(
        qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, jobs_dir: object) -> None:
    asking = SessionLogins(Asking())
    calls: list[bool] = []  # each survey: whether it may ask
    answers = [SILENT, SILENT, ANSWERED]
    gate = threading.Event()
    gate.set()

    def survey(logins: SessionLogins | None) -> list[Seen]:
        assert logins is not None
        calls.append(logins.prompts is not None)
        gate.wait(30)
        return [answers.pop(0)]

    monkeypatch.setattr(panel_module, "survey", survey)
    panel = JobsPanel(asking)
    qtbot.addWidget(panel)
    shown: list[str] = []
    panel.attach_requested.connect(shown.append)
    qtbot.waitUntil(lambda: P.id in panel.remote, timeout=10_000)  # the window's first: asks
    assert calls == [True]
    said = panel.list.item(0).text()
    assert "nas, which does not answer now (" in said and "tries again" in said, said
    assert panel.list.item(0).flags() & Qt.ItemFlag.ItemIsSelectable

    gate.clear()
    panel.survey()  # the timer's, quiet, still under way when the user chooses the job
    qtbot.waitUntil(lambda: calls == [True, False], timeout=10_000)
    panel.list.setCurrentRow(0)
    panel.show_button.click()
    assert shown == []
    gate.set()  # the quiet one answers (still silent); the asking one follows, and reaches it
    qtbot.waitUntil(lambda: shown == [P.id], timeout=10_000)
    assert calls == [True, False, True]
    panel.stop()
