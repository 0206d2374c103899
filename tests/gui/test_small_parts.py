"""Settings, the buffer suggestion, and the last-resort error dialog (no lab)."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QWizardPage
from pytestqt.qtbot import QtBot

from zmigrate.engine import zfs
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.hosts.login import HostSpec
from zmigrate.engine.plan import Options, stream_of
from zmigrate.engine.transports import Compression, Transport, carrier
from zmigrate.engine.transports.compress import suggest
from zmigrate.engine.verdict.diagnosis import buffer_suggestion
from zmigrate.gui import markup
from zmigrate.gui.app import LastResortHook
from zmigrate.gui.generated.ui_done_page import Ui_DonePage
from zmigrate.gui.generated.ui_review_page import Ui_ReviewPage
from zmigrate.gui.generated.ui_transport_page import Ui_TransportPage
from zmigrate.gui.pages.transport_page import TransportPage, buffer_hint, compression_hint
from zmigrate.gui.session import Session
from zmigrate.gui.settings import RecentHost, Settings
from zmigrate.gui.widgets.host_panel import THIS_COMPUTER, HostPanel

pytestmark = pytest.mark.gui
MiB, GiB = 2**20, 2**30


def test_recent_hosts_are_remembered_without_passwords(settings: Settings, qtbot: QtBot) -> None:
    settings.remember_host(HostSpec("nas", user="ops", port=2222, password="secret"), "source")
    settings.remember_host(HostSpec("backup-01", sudo=True), "destination")
    settings.remember_host(HostSpec("nas", user="ops", port=2222), "source")
    assert [h.label for h in settings.recent_hosts()] == ["ops@nas:2222", "backup-01"]
    assert "secret" not in str(settings.q.value("hosts/recent"))
    assert settings.last_host("destination") == RecentHost("backup-01", sudo=True)
    panel = HostPanel("source")
    qtbot.addWidget(panel)
    panel.fill_hosts(settings.recent_hosts(), settings.last_host("source"))
    items = [panel.ui.host_combo.itemText(i) for i in range(panel.ui.host_combo.count())]
    assert items[:3] == [THIS_COMPUTER, "ops@nas:2222", "backup-01"]
    spec = panel.spec()
    assert (spec.host, spec.user, spec.port) == ("nas", "ops", 2222)


def test_buffer_suggestion_holds_five_seconds_within_memory() -> None:
    """The engine's suggestion (diagnosis.buffer_suggestion, the doctor's 5 s rule), worded."""
    advice = buffer_suggestion(None, [])
    assert advice.figures["size"] == 576 * MiB  # 5 s at 110 MB/s, in 64 MiB steps
    assert "1 GbE" in buffer_hint(advice, None)
    advice = buffer_suggestion(20 * MiB, [])
    assert advice.figures["size"] == 128 * MiB  # at least 5 s at the 20 MiB/s rate limit
    assert "the rate limit (20 MiB/s)" in buffer_hint(advice, 20 * MiB)
    advice = buffer_suggestion(None, [1 * GiB, 16 * GiB])
    why = buffer_hint(advice, None)
    assert advice.figures["size"] == GiB // 4, advice
    assert "free memory (1 GiB), which holds 2.4 s" in why, why


def test_last_resort_hook_shows_one_dialog_at_a_time(qtbot: QtBot) -> None:
    hook = LastResortHook()
    for _ in range(3):
        try:
            raise RuntimeError("boom")
        except RuntimeError as exc:
            hook(RuntimeError, exc, exc.__traceback__)
    assert hook.box is not None
    assert "boom" in hook.box.text()
    first = hook.box
    hook.box.reject()
    assert hook.box is None or hook.box is first


def test_app_names_its_desktop_file_and_has_the_bundled_icon() -> None:
    """In a process of its own: make_app styles the whole application, and restyling the one
    the other tests share, with their closed windows still waiting for deletion, crashed Qt."""
    import subprocess
    import sys

    code = (
        "from PySide6.QtGui import QIcon\n"
        "from zmigrate.gui.app import make_app\n"
        "from zmigrate.gui.icons import APP_ID, ICON_PATH, app_icon\n"
        "app = make_app([])\n"
        "assert app.desktopFileName() == APP_ID == 'io.github.zmigrate.Zmigrate'\n"
        "assert not QIcon(ICON_PATH).pixmap(64, 64).isNull()  # the SVG is compiled in\n"
        "assert not app_icon().isNull() and not app.windowIcon().isNull()\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert r.returncode == 0, r.stderr


def test_no_display_is_a_clear_error_not_a_qt_abort() -> None:
    import os

    from lab.util import zmigrate

    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    r = zmigrate(env, timeout=60)
    assert r.returncode == 2
    assert "no display" in r.stderr and "zmigrate --help" in r.stderr


@pytest.mark.parametrize(("form", "label"), [(Ui_ReviewPage, "summary_label"),
                                             (Ui_TransportPage, "buffer_hint"),
                                             (Ui_DonePage, "saved_label")])
def test_prose_labels_show_escaped_text_as_written(qtbot: QtBot, form: type,
                                                   label: str) -> None:
    """These labels get prose without tags: as AutoText Qt would show `&#x27;` or `&amp;` as is."""
    host = QWizardPage()
    qtbot.addWidget(host)
    ui = form()
    ui.setupUi(host)
    widget = getattr(ui, label)
    assert widget.textFormat() == Qt.TextFormat.RichText
    for text in ("zfs receive checks the stream's checksums & \"guids\"",  # AutoText: plain
                 "a <not a tag> & more"):
        widget.setText(markup.escape(text))
        shown = QTextDocument()
        shown.setHtml(widget.text())
        assert shown.toPlainText() == text


@pytest.mark.parametrize(("system", "fix"), [
    ("Linux 6.1.0-26-amd64", "apt install zfsutils-linux"),
    ("FreeBSD 14.1-RELEASE", "kldload zfs"),
])
def test_a_host_without_zfs_says_so_on_its_panel_with_a_fix_for_its_os(
        qtbot: QtBot, system: str, fix: str) -> None:
    probe = (Path(__file__).parent.parent / "data/zfs/zfs-fuse/probe.txt").read_text()
    caps = dataclasses.replace(zfs.parse_probe(probe), has_zfs=False, mbuffer_version=None,
                               system=system)
    panel = HostPanel("source")
    qtbot.addWidget(panel)
    panel.host, panel.caps = LocalHost(), caps
    panel._show_connected()
    text = panel.ui.status_label.text()
    assert "zfs was not found there" in text and fix in text
    assert "mbuffer was not found there" in text
    assert ("apt install" in text) == system.startswith("Linux")


def test_memory_capped_buffer_advice_names_the_wizards_control() -> None:
    from zmigrate.engine.verdict.diagnosis import buffer_advice
    from zmigrate.gui import words

    text = words.advice(buffer_advice(500 * MiB, memory=2 * GiB))
    assert "Buffer size" in text and "512M" in text and "--" not in text


def test_the_suggested_buffer_follows_the_rate_limit_until_the_user_picks_one(
        qtbot: QtBot, settings: Settings) -> None:
    """It stayed at 512M (5 s at 1 GbE) with a 1 MiB/s limit while the hint said 16M."""
    page = TransportPage(Session(), settings)
    qtbot.addWidget(page)
    page.initializePage()
    combo = page.ui.buffer_combo
    assert combo.currentText() == "576M"
    page.ui.rate_edit.setText("1M")
    assert combo.currentText() == "64M" and "Suggested 64M" in page.ui.buffer_hint.text()
    page.ui.rate_edit.setText("")
    assert combo.currentText() == "576M"
    combo.setCurrentText("1G")  # the user's choice stays
    page.ui.rate_edit.setText("1M")
    assert combo.currentText() == "1G"


def test_compression_is_suggested_where_it_pays_and_both_hosts_have_the_tool(
        qtbot: QtBot, settings: Settings) -> None:
    caps = zfs.probe(LocalHost("src"))  # this machine's real probe: it has zstd and lz4
    assert {"zstd", "lz4"} <= caps.tools.tools
    stored = zfs.Dataset("tank/logs", "filesystem", 1, 0, 0, 0, 0, compression="off")
    session = Session(src_host=LocalHost("src"), src_caps=caps, dst_host=LocalHost("dst"),
                      dst_caps=caps, source_dataset=stored)
    page = TransportPage(session, settings)
    qtbot.addWidget(page)
    page.initializePage()
    ui = page.ui
    # Suggested, not chosen: whether it pays depends on the link.
    assert ui.compress_combo.currentText() == "none" and ui.compress_combo.isEnabled()
    assert "Suggested zstd" in ui.compress_hint.text() and "compression=off" in \
        ui.compress_hint.text()
    assert page.options().compress is None
    ui.compress_combo.setCurrentText("zstd")
    assert page.options().compress is Compression.ZSTD
    ui.local_radio.setEnabled(True)
    ui.local_radio.setChecked(True)  # one host: nothing crosses a link
    assert not ui.compress_combo.isEnabled() and page.options().compress is None
    assert "one host" in ui.compress_hint.text()
    # A destination without zstd: none, and the hint names the host and the install command.
    no_zstd = dataclasses.replace(caps, tools=dataclasses.replace(
        caps.tools, tools=caps.tools.tools - {"zstd"}))
    tcp, ssh = carrier(Transport.TCP), carrier(Transport.SSH)
    got = suggest(tcp, stream_of(stored, caps, no_zstd, Options()),
                  [("src", caps), ("dst", no_zstd)])
    why = compression_hint(got)
    assert got.compression is Compression.NONE and "zstd is not on dst" in why and "install" in why
    # Stored compressed: little to gain only where its blocks go as stored (send -c, both
    # OpenZFS); this zfs-fuse cannot, so they go decompressed and compress well.
    lz4 = dataclasses.replace(stored, compression="lz4")
    both = [("src", caps), ("dst", caps)]
    assert suggest(ssh, stream_of(lz4, caps, caps, Options()), both).compression \
        is Compression.ZSTD
    openzfs = dataclasses.replace(caps, dialect="openzfs", compressed_send=True)
    got = suggest(ssh, stream_of(lz4, openzfs, openzfs, Options()), both)
    assert got.compression is Compression.NONE and "compression=lz4" in compression_hint(got)
    encrypted = dataclasses.replace(stored, encryption="aes-256-gcm")
    got = suggest(ssh, stream_of(encrypted, caps, caps, Options()), both)
    assert got.compression is Compression.NONE and "raw" in compression_hint(got)


def test_the_destination_page_words_its_own_fix_from_the_refusals_figures() -> None:
    """The engine's fix may name CLI flags: the page words the fix from the reason and its
    figures instead of filtering the engine's words."""
    from zmigrate.engine.errors import PreflightError, PreflightReason
    from zmigrate.gui.pages.destination_page import refusal_fix

    no_parent = PreflightError("the destination's parent pool/x does not exist",
                               fix="create it first: zfs create -p pool/x",
                               reason=PreflightReason.NO_PARENT, figures={"parent": "pool/x"})
    assert refusal_fix(no_parent) == "Create it first: zfs create -p pool/x"
    hint = "install it there: apt install mbuffer, or dnf install mbuffer"
    mbuffer = PreflightError("mbuffer is not installed", fix=hint,
                             reason=PreflightReason.MISSING_TOOL,
                             figures={"tool": "mbuffer", "install": hint})
    assert refusal_fix(mbuffer) == "Install it there: apt install mbuffer, or dnf install mbuffer"
    raw = PreflightError("raw sends (zfs send -w) are not supported there",
                         fix="upgrade to OpenZFS 0.8 or newer, or choose --decrypt",
                         reason=PreflightReason.UNSUPPORTED, figures={"feature": "raw"})
    fix = refusal_fix(raw)
    assert fix is not None and "OpenZFS 0.8" in fix and "--" not in fix
    key = PreflightError("tank/x is encrypted and its key is not loaded",
                         fix="load the key (zfs load-key tank/x) or leave out --decrypt",
                         reason=PreflightReason.KEY_NOT_LOADED)
    assert refusal_fix(key) is None  # not a choice this page offers: no CLI words either
