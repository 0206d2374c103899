"""The Hosts page for someone new: what to type, This computer, where keys come from; the host
field's `user@host:port`; the password memory's rules (no lab)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path

import pytest
from PySide6.QtGui import QTextDocument
from pytestqt.qtbot import QtBot

from zmigrate.engine.errors import ZmigrateError
from zmigrate.engine.hosts.login import HostSpec
from zmigrate.gui import words
from zmigrate.gui.settings import Settings
from zmigrate.gui.widgets.host_panel import THIS_COMPUTER, HostPanel
from zmigrate.gui.wizard import MigrationWizard

pytestmark = pytest.mark.gui

Opener = Callable[[], MigrationWizard]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME with an empty ~/.ssh (no config, no key) and no SSH agent."""
    path = tmp_path / "home"
    (path / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(path))
    monkeypatch.setenv("ZMIGRATE_SSH_CONFIG", str(path / ".ssh" / "config"))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    return path


@pytest.fixture
def open_wizard(qtbot: QtBot, settings: Settings, home: Path) -> Iterator[Opener]:
    """Makes the wizard when the test has set up HOME: the page reads it when it is made."""
    made: list[MigrationWizard] = []

    def make() -> MigrationWizard:
        w = MigrationWizard(settings)
        qtbot.addWidget(w)
        w.show()
        made.append(w)
        return w

    try:
        yield make
    finally:
        for w in made:
            w.shutdown()


def plain(html: str) -> str:
    doc = QTextDocument()
    doc.setHtml(html)
    return doc.toPlainText()


def test_a_new_user_sees_what_to_type_this_computer_and_where_keys_come_from(
        open_wizard: Opener) -> None:
    page = open_wizard().hosts_page
    assert page.first_run
    assert page.ui.first_run_frame.isVisible()
    text = plain(page.ui.first_run_label.text())
    for part in ("user@host", "user@host:port", "~/.ssh/config", "This computer is first",
                 "SSH agent", "~/.ssh/id_ed25519, id_ecdsa or id_rsa", "Key file",
                 "Password under Log in with", "once per session and never stored"):
        assert part in text, part
    assert "none is here yet" in text  # no agent, no default key in this HOME
    for panel in page.panels():
        combo = panel.ui.host_combo
        assert [combo.itemText(i) for i in range(combo.count())] == [THIS_COMPUTER]
        line = combo.lineEdit()
        assert line is not None and line.placeholderText() == words.HOST_PLACEHOLDER
        assert combo.currentText() == ""  # the placeholder shows
    # The usual hint would repeat the guidance: only its host key sentence stays.
    assert page.ui.hint_label.text() == words.HOST_KEYS_HINT


def test_the_guidance_names_the_agent_and_keys_that_are_there(
        open_wizard: Opener, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (home / ".ssh" / "id_ed25519").write_text("")
    (home / ".ssh" / "id_rsa").write_text("")
    monkeypatch.setenv("SSH_AUTH_SOCK", str(home / "agent.sock"))
    text = plain(open_wizard().hosts_page.ui.first_run_label.text())
    assert "(here: the agent, id_ed25519, id_rsa)" in text
    assert "none is here yet" not in text


def test_a_config_host_gets_the_short_hint_instead(open_wizard: Opener, home: Path) -> None:
    (home / ".ssh" / "config").write_text("Host nas\n    HostName 192.0.2.7\n\nHost *\n"
                                          "    ServerAliveInterval 30\n")
    page = open_wizard().hosts_page
    assert not page.first_run
    assert page.ui.first_run_frame.isHidden()
    assert page.ui.hint_label.text().startswith("Hosts come from your SSH config")
    combo = page.source.ui.host_combo
    assert [combo.itemText(i) for i in range(combo.count())] == [THIS_COMPUTER, "nas"]


def test_a_recent_host_gets_the_short_hint_instead(open_wizard: Opener,
                                                   settings: Settings) -> None:
    settings.remember_host(HostSpec("backup-01", user="ops"), "destination")
    page = open_wizard().hosts_page
    assert not page.first_run
    assert page.ui.first_run_frame.isHidden()
    assert "Hosts come from your SSH config" in page.ui.hint_label.text()
    combo = page.destination.ui.host_combo
    assert combo.itemText(0) == THIS_COMPUTER and combo.itemText(1) == "ops@backup-01"


def test_having_used_only_this_computer_is_still_a_first_run(open_wizard: Opener,
                                                             settings: Settings) -> None:
    settings.remember_host(HostSpec("local"), "source")
    page = open_wizard().hosts_page
    assert page.first_run and page.ui.first_run_frame.isVisible()
    assert page.source.ui.host_combo.currentText() == THIS_COMPUTER  # the last one, again


@pytest.mark.parametrize(("typed", "spin", "expected"), [
    ("ops@nas:2222", 0, ("nas", "ops", 2222)),
    ("nas:2222", 22, ("nas", None, 2222)),  # typed with the host: the one meant
    ("nas", 2200, ("nas", None, 2200)),
    ("nas", 0, ("nas", None, None)),  # from the SSH config
    ("root@[2001:db8::7]:2022", 0, ("2001:db8::7", "root", 2022)),
    ("2001:db8::7", 0, ("2001:db8::7", None, None)),  # no brackets: all of it is the address
])
def test_the_host_field_takes_user_at_host_colon_port(
        qtbot: QtBot, home: Path, typed: str, spin: int,
        expected: tuple[str, str | None, int | None]) -> None:
    panel = HostPanel("source")
    qtbot.addWidget(panel)
    panel.ui.host_combo.setEditText(typed)
    panel.ui.port_spin.setValue(spin)
    spec = panel.spec()
    assert (spec.host, spec.user, spec.port) == expected


def test_a_port_out_of_range_is_said_before_connecting(qtbot: QtBot, home: Path) -> None:
    panel = HostPanel("source")
    qtbot.addWidget(panel)
    panel.ui.host_combo.setEditText("nas:70000")
    with pytest.raises(ZmigrateError, match="port 70000 is not valid"):
        panel.spec()
    panel.start_connect()
    assert "port 70000 is not valid" in panel.ui.status_label.text() and not panel.busy


def test_the_password_dialog_says_it_is_not_stored(qtbot: QtBot, home: Path) -> None:
    panel = HostPanel("source")
    qtbot.addWidget(panel)
    fut: Future[object] = Future()
    panel.relay.secret_asked.emit("Password for root@nas", fut)
    dialog = panel.dialogs.secret_dialog
    assert dialog is not None
    assert dialog.labelText() == f"Password for root@nas\n{words.SECRET_KEPT}"
    panel.dialogs.answer_secret("hunter2")
    assert fut.result(timeout=1) == "hunter2" and panel.dialogs.secret_dialog is None
    # Closing the wizard answers an open one with "no".
    fut = Future()
    panel.relay.secret_asked.emit("Password for root@nas", fut)
    panel.close_prompts()
    assert fut.result(timeout=1) is None
