"""The Hosts page names a connected host's link (lab-far: a veth in the namespace lab)."""

from __future__ import annotations

import pytest
from lab.shaped import ShapedLab
from pytestqt.qtbot import QtBot
from wizard_driver import type_host

from zmigrate.gui.widgets.host_panel import HostPanel

pytestmark = [pytest.mark.gui, pytest.mark.lab]


def test_a_connected_host_shows_its_link(qtbot: QtBot, shaped_lab: ShapedLab,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in shaped_lab.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    panel = HostPanel("destination")
    qtbot.addWidget(panel)
    type_host(panel, "lab-far")
    panel.start_connect()  # what the Hosts page does on connect_requested
    qtbot.waitUntil(lambda: not panel.busy, timeout=30_000)
    assert panel.connected, panel.ui.status_label.text()
    try:
        text = panel.ui.status_label.text()
        assert f"Link zmsb{shaped_lab.suffix} veth, MTU {shaped_lab.mtu} (toward this computer)" \
            in text, text
    finally:
        panel.host_released.connect(lambda host: host.close())  # as the Hosts page does
        panel.release()
