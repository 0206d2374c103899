"""The Transport page's private choice (issue 33): the default where both hosts' real probes find
socat or OpenSSL 3, saying why; off with the host and the fix where one has neither (Direct TCP
the default then); a way picked by hand is the one the page opens with next time."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from zmigrate.engine import zfs
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.transports import Transport
from zmigrate.gui.pages.transport_page import TransportPage
from zmigrate.gui.session import Session
from zmigrate.gui.settings import Settings

pytestmark = pytest.mark.gui


def test_the_private_choice_where_both_hosts_can_and_where_one_cannot(
        qtbot: QtBot, settings: Settings) -> None:
    caps = zfs.probe(LocalHost("src"))  # this machine's real probe: OpenSSL 3
    assert caps.tools.openssl is not None and caps.tools.openssl >= (3, 0)
    session = Session(src_host=LocalHost("src"), src_caps=caps, dst_host=LocalHost("dst"),
                      dst_caps=caps)
    page = TransportPage(session, settings)
    qtbot.addWidget(page)
    page.initializePage()
    ui = page.ui
    assert ui.private_radio.isChecked() and ui.private_radio.isEnabled()  # the default
    assert "The default: both hosts can take it" in ui.private_note.text()
    assert page.options().transport is Transport.PRIVATE
    assert ui.port_spin.isEnabled()  # it listens, as tcp does
    # OpenSSL 3 alone will do (openssl s_client/s_server); 1.1 without socat will not.
    plain = dataclasses.replace(caps, tools=dataclasses.replace(caps.tools, socat=None))
    page1 = TransportPage(Session(src_host=LocalHost("src"), src_caps=caps,
                                  dst_host=LocalHost("dst"), dst_caps=plain), settings)
    qtbot.addWidget(page1)
    page1.initializePage()
    assert page1.ui.private_radio.isEnabled()
    old = dataclasses.replace(caps, tools=dataclasses.replace(caps.tools, openssl=(1, 1),
                                                              socat=None))
    page2 = TransportPage(Session(src_host=LocalHost("src"), src_caps=caps,
                                  dst_host=LocalHost("dst"), dst_caps=old), settings)
    qtbot.addWidget(page2)
    page2.initializePage()
    assert not page2.ui.private_radio.isEnabled()
    assert "dst has neither socat nor OpenSSL 3" in page2.ui.private_note.text()
    assert "apt install socat" in page2.ui.private_note.text()  # how, on that host (Linux)
    assert "Direct TCP is the default" in page2.ui.private_note.text()
    assert page2.ui.tcp_radio.isChecked()


def test_a_way_picked_by_hand_is_remembered_and_the_default_is_not(
        qtbot: QtBot, settings: Settings) -> None:
    caps = zfs.probe(LocalHost("src"))
    session = Session(src_host=LocalHost("src"), src_caps=caps, dst_host=LocalHost("dst"),
                      dst_caps=caps)

    def opened() -> TransportPage:
        page = TransportPage(session, settings)
        qtbot.addWidget(page)
        page.initializePage()
        return page

    page = opened()
    assert page.validatePage()  # the default, not picked: nothing remembered
    assert opened().ui.private_radio.isChecked()
    page = opened()
    qtbot.mouseClick(page.ui.tcp_radio, Qt.MouseButton.LeftButton)
    assert page.ui.tcp_radio.isChecked() and page.validatePage()
    again = opened()
    assert again.ui.tcp_radio.isChecked()
    assert again.options().transport is Transport.TCP
    # The page says which is checked and why, where private is the default between them.
    assert again.ui.private_note.text().endswith(
        "Checked instead: the way you picked by hand last time.")
    assert "Checked instead" not in page.ui.private_note.text()


def test_the_listener_addresses_follow_the_transport_and_refuse_what_is_no_address(
        qtbot: QtBot, settings: Settings) -> None:
    caps = zfs.probe(LocalHost("src"))
    page = TransportPage(Session(src_host=LocalHost("src"), src_caps=caps,
                                 dst_host=LocalHost("dst"), dst_caps=caps), settings)
    qtbot.addWidget(page)
    page.initializePage()
    ui = page.ui
    ui.connect_edit.setText("[fe80::1]")
    ui.allow_edit.setText("10.0.0.7")
    # Private: the source connects to the address given, and proves its key, not its address.
    assert ui.private_radio.isChecked() and ui.connect_edit.isEnabled()
    assert not ui.allow_edit.isEnabled()
    options = page.options()
    assert (options.connect_address, options.allow_address) == ("fe80::1", None)
    ui.tcp_radio.setChecked(True)  # cleartext: its listener knows the sender by address
    assert ui.allow_edit.isEnabled()
    assert (page.options().connect_address, page.options().allow_address) == ("fe80::1",
                                                                              "10.0.0.7")
    ui.ssh_radio.setChecked(True)  # nothing listens: neither is used
    assert not ui.connect_edit.isEnabled() and not ui.allow_edit.isEnabled()
    assert (page.options().connect_address, page.options().allow_address) == (None, None)
    ui.tcp_radio.setChecked(True)
    ui.allow_edit.setText("10.0.0.7; reboot")
    assert not page.isComplete()
    assert page.error == "The address to accept is not an IP address or a host name."
    assert page.error in ui.error_label.text()
