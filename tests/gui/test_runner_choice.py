"""Review's runner choice without a lab: which machines it offers for which hosts, and the
refusal (Start disabled) where another machine could not name the hosts."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from zmigrate.engine.hosts.login import HostSpec
from zmigrate.gui.widgets.runner_choice import UNNAMED, RunnerChoice


def _items(c: RunnerChoice) -> list[str]:
    return [c.combo.itemText(i) for i in range(c.combo.count())]


def test_two_named_hosts_are_offered_and_this_computer_needs_no_check(qtbot: QtBot) -> None:
    c = RunnerChoice()
    qtbot.addWidget(c)
    c.set_hosts(HostSpec("nas"), HostSpec.parse("backup@vault", sudo=True))
    assert _items(c) == ["This computer", "nas (the source)", "backup@vault (the destination)",
                         "Another machine…"]
    assert c.hosts == [("nas", False), ("backup@vault", True)]
    assert c.runner() is None and c.ready and not c.checking
    assert c.edit.isHidden()
    c.combo.setCurrentIndex(c.combo.findText("Another machine…"))
    c.combo.activated.emit(c.combo.currentIndex())
    assert not c.edit.isHidden() and not c.ready  # no name yet
    assert "Type the ssh name" in c.label.text()


def test_a_host_another_machine_cannot_name_leaves_only_this_computer(qtbot: QtBot) -> None:
    c = RunnerChoice()
    qtbot.addWidget(c)
    c.set_hosts(HostSpec("local"), HostSpec("nas", port=2222))
    assert _items(c) == ["This computer", "Another machine…"]
    c.choose("runner")
    assert c.runner() == "runner" and not c.checking and not c.ready
    assert c.label.text() == UNNAMED
    assert c.label.property("banner") == "error"
    c.choose(None)
    assert c.ready and c.label.property("banner") == ""
