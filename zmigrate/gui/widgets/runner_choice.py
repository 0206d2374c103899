"""Review's "Run on": this computer, the source, the destination, or another machine (its ssh
name). A runner host is checked off the GUI thread (engine/runner/elsewhere.check: zmigrate
there, its logins to both hosts) and what it found, or the refusal with its fix, is shown
before Start is enabled."""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
)

from ...engine.hosts.login import HostSpec
from ...engine.hosts.remembered import SessionLogins
from ...engine.runner import elsewhere
from ...engine.runner.elsewhere import RunnerCheck
from ...engine.runner.remote import Reach
from ...engine.runner.request import host_text
from .. import markup, style, words
from ..threads import run_task

HERE: Final = "here"
OTHER: Final = "other"
UNNAMED: Final = ("Another machine cannot run this transfer: it reaches the two hosts by their "
                  "ssh names, and one of them is this computer or was given a port, key or "
                  "password on the first page. Fix: name both hosts by their ssh config "
                  "aliases on the first page, or run it on this computer.")
NOT_HANDED_OVER: Final = ("Another machine cannot run this transfer: one of its choices has "
                         "no `zmigrate send` option to say it with there. Fix: run it on this "
                         "computer.")


def reach_text(runner: str, r: Reach) -> str:
    """How the runner host logs in to one of the job's hosts, in a line."""
    if r.login == "this machine":
        return f"{r.host} is {runner} itself"
    keys = ", ".join(r.identities) or "its agent and default keys"
    return f"logs in to {r.host} as {r.login} with {keys} (its ssh config: {r.ssh_config})"


def found_html(c: RunnerCheck) -> str:
    """What the check found on the runner host."""
    lines = [f"<b>{markup.escape(c.runner)} runs the transfer</b> (zmigrate at "
             f"{markup.escape(c.zmigrate)}) with the choices above, planning its commands "
             "again there; it goes on when this window closes or this computer sleeps."]
    lines += ["• " + markup.escape(reach_text(c.runner, r)) for r in c.reach]
    return "<br>".join(lines)


class RunnerChoice(QGroupBox):
    """Where the transfer runs; `ready` once the choice is this computer or a checked host.

    Signals:
        changed(): the choice or its check changed (Review's Start follows `ready`).
    """

    changed = Signal()

    def __init__(self) -> None:
        super().__init__("Where the transfer runs")
        self.logins = SessionLogins()  # the window's (Review hands them over)
        self.setObjectName("runner_box")
        self.combo = QComboBox()
        self.combo.setObjectName("run_on_combo")
        self.combo.setAccessibleName("Run on")
        self.edit = QLineEdit()
        self.edit.setObjectName("runner_edit")
        self.edit.setPlaceholderText("ssh name of a machine that stays on, e.g. nas")
        self.edit.setAccessibleName("The runner machine's ssh name")
        self.check_button = QPushButton("Check")
        self.check_button.setObjectName("runner_check_button")
        self.check_button.setAccessibleName("Check the runner machine")
        self.label = QLabel()
        self.label.setObjectName("runner_label")
        self.label.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(QLabel("Run on:"))
        row.addWidget(self.combo, 1)
        row.addWidget(self.edit, 2)
        row.addWidget(self.check_button)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.label)
        self.hosts: list[tuple[str, bool]] = []
        self.checked: RunnerCheck | None = None
        self.checking = False
        self.refused = ""  # why these choices cannot go to another machine
        self.unnamed = ""  # ... or these hosts
        self._generation = 0
        self.combo.activated.connect(lambda _i: self._chosen())
        self.edit.returnPressed.connect(self._chosen)
        self.check_button.clicked.connect(self._chosen)
        self.set_hosts(None, None)

    def set_hosts(self, src: HostSpec | None, dst: HostSpec | None) -> None:
        """The job's two hosts: each may be the runner where it is reached by an ssh name."""
        texts = [host_text(spec) if spec is not None and not spec.is_local else None
                 for spec in (src, dst)]
        self.hosts = [(t, bool(spec and spec.sudo)) for t, spec in zip(texts, (src, dst),
                                                                       strict=True) if t]
        self.unnamed = "" if len(self.hosts) == 2 else UNNAMED
        if self.unnamed:
            self.hosts = []  # a host the runner could not name: only this computer
        previous = self.combo.currentData()
        self.combo.clear()
        self.combo.addItem(words.THIS_COMPUTER, HERE)
        for label, text in (("the source", texts[0]), ("the destination", texts[1])):
            if text and self.hosts and self.combo.findData(text) < 0:
                self.combo.addItem(f"{text} ({label})", text)
        self.combo.addItem("Another machine…", OTHER)
        self.combo.setCurrentIndex(max(self.combo.findData(previous), 0))
        self._chosen()

    def choose(self, runner: str | None) -> None:
        """Choose `runner` (an ssh name; None: this computer) and check it."""
        index = self.combo.findData(runner if runner else HERE)
        if index < 0:
            index = self.combo.findData(OTHER)
            self.edit.setText(runner or "")
        self.combo.setCurrentIndex(index)
        self._chosen()

    def runner(self) -> str | None:
        """The chosen runner host's ssh name; None for this computer."""
        data = self.combo.currentData()
        if data == OTHER:
            return self.edit.text().strip() or None
        return None if data in (HERE, None) else str(data)

    @property
    def ready(self) -> bool:
        if self.runner() is None:
            return bool(self.combo.currentData() != OTHER)
        return self.checked is not None and self.checked.problem is None \
            and not self.checking and not self.why_not

    @property
    def why_not(self) -> str:
        """Why the transfer cannot run on another machine ("": it can)."""
        return self.unnamed or self.refused

    def refuse(self, why: str) -> None:
        """These choices cannot be handed to another machine ("" once they can)."""
        if why != self.refused:
            self.refused = why
            self._chosen()

    def _chosen(self) -> None:
        other = self.combo.currentData() == OTHER
        self.edit.setVisible(other)
        self.check_button.setVisible(other)
        self._generation += 1
        self.checked = None
        name = self.runner()
        self.checking = name is not None and not self.why_not
        if self.checking and name is not None:
            generation, hosts = self._generation, list(self.hosts)
            logins = self.logins
            run_task(lambda: elsewhere.check(name, hosts, logins),
                     lambda c: self._on_checked(generation, c),
                     lambda exc: self._on_failed(generation, exc))
        self._show()
        self.changed.emit()

    def _on_checked(self, generation: int, c: RunnerCheck) -> None:
        if generation == self._generation:
            self.checking, self.checked = False, c
            self._show()
            self.changed.emit()

    def _on_failed(self, generation: int, exc: Exception) -> None:
        if generation == self._generation:
            self.checking = False
            self._show(exc)
            self.changed.emit()

    def _show(self, failed: Exception | None = None) -> None:
        name = self.runner()
        banner, text = "", ""
        if self.why_not and (name is not None or self.combo.currentData() == OTHER):
            banner, text = "error", markup.escape(self.why_not)
        elif failed is not None:
            banner, text = "error", words.error_html(failed)
        elif name is None:
            text = ("Type the ssh name of the machine to run the transfer on." if
                    self.combo.currentData() == OTHER else "This computer runs the transfer "
                    "in the background: closing the window keeps it running; sleeping or "
                    "turning off this computer pauses it.")
        elif self.checking:
            text = f"Checking {markup.escape(name)}: zmigrate there, its logins to both hosts…"
        elif self.checked is not None and (problem := self.checked.problem) is not None:
            banner, text = "error", words.error_html(problem)
        elif self.checked is not None:
            banner, text = "ok", found_html(self.checked)
        self.label.setText(text)
        style.set_banner(self.label, banner)

