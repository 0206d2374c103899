"""One side of the Hosts page: where to connect, how to log in, and what the host has."""

from __future__ import annotations

import re
import weakref

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFileDialog, QWidget

from zmigrate.engine import plain_words
from zmigrate.engine.errors import ZmigrateError
from zmigrate.engine.hosts import Host
from zmigrate.engine.hosts import tools as capabilities
from zmigrate.engine.hosts.login import HostSpec, config_aliases
from zmigrate.engine.hosts.remembered import SecretMemory, connect_remembering
from zmigrate.engine.wire import toward_us
from zmigrate.engine.zfs import Capabilities, probe

from .. import forms, markup, style, words
from ..dialogs.login import LoginDialogs
from ..generated.ui_host_panel import Ui_HostPanel
from ..prompts import GuiPrompts, PromptRelay
from ..settings import RecentHost
from ..threads import run_task

THIS_COMPUTER = "This computer"
AUTH_AGENT, AUTH_KEY, AUTH_PASSWORD = range(3)


# `user@host:port`, or `user@[v6 address]:port`: the port after the last colon.
_PORT_RE = re.compile(r"(?:\[([^\]]+)\]|([^:\[\]]+)):(\d+)")


def split_port(text: str) -> tuple[str, int | None]:
    """`user@host:port` as ("user@host", port); text without a port as it is. An IPv6 address
    takes brackets for a port: [2001:db8::1]:2222."""
    user, at, host = text.rpartition("@")
    m = _PORT_RE.fullmatch(host)
    if m is None:
        return text, None
    port = int(m.group(3))
    if not 0 < port < 65536:
        raise ZmigrateError(f"port {port} is not valid", fix="a port is a number from 1 to 65535")
    return user + at + (m.group(1) or m.group(2)), port


def connect_and_probe(spec: HostSpec, prompts: GuiPrompts,
                      secrets: SecretMemory) -> tuple[Host, Capabilities]:
    """Open the session and probe the host (runs on a worker thread); a password given
    earlier this session for the same login is used again without asking."""
    host = connect_remembering(spec, prompts, secrets)
    try:
        caps = probe(host)
    except BaseException:
        host.close()
        raise
    link = toward_us(host, caps.ssh_client_ip)
    if link is not None:
        LINKS[host] = plain_words.link_brief(link)
    return host, caps


# Each connected host's link toward this computer, briefly (read with it, on the worker).
LINKS: weakref.WeakKeyDictionary[Host, str] = weakref.WeakKeyDictionary()


class HostPanel(QWidget):
    """Connect form for one side.

    Signals:
        state_changed(): connected, disconnected, or busy changed.
        connect_requested(): the user asked to connect (the page decides how).
        host_released(Host): the panel let go of its host (after an edit).
    """

    state_changed = Signal()
    connect_requested = Signal()
    host_released = Signal(object)

    def __init__(self, side: str, parent: QWidget | None = None, *,
                 secrets: SecretMemory | None = None) -> None:
        super().__init__(parent)
        self.ui = Ui_HostPanel()
        forms.setup(self.ui, self)
        self.side = side
        self.host: Host | None = None
        self.caps: Capabilities | None = None
        self.busy = False
        self.connected_spec: HostSpec | None = None
        # Passwords typed this session (shared with the other side by the page), never stored.
        self.secrets = secrets if secrets is not None else SecretMemory()
        self._generation = 0
        self.relay = PromptRelay(self)
        self.prompts = GuiPrompts(self.relay)
        self.dialogs = LoginDialogs(self, self.relay)
        title = side.capitalize()
        for w in self.findChildren(QWidget):
            name = w.accessibleName()
            if name and not name.startswith(title):
                w.setAccessibleName(f"{title} {name[0].lower()}{name[1:]}")
        self.ui.busy_bar.hide()
        self.ui.status_label.setText("Not connected.")
        style.set_role(self.ui.status_label, "muted")
        self.ui.connect_button.clicked.connect(self.connect_requested)
        line = self.ui.host_combo.lineEdit()
        if line is not None:
            line.setPlaceholderText(words.HOST_PLACEHOLDER)
            line.returnPressed.connect(self.connect_requested)
        self.ui.auth_combo.currentIndexChanged.connect(self._on_auth_changed)
        self.ui.key_browse_button.clicked.connect(self._on_browse_key)
        self.ui.host_combo.activated.connect(self._on_host_activated)
        for signal in (self.ui.host_combo.editTextChanged, self.ui.user_edit.textEdited,
                       self.ui.key_edit.textEdited, self.ui.password_edit.textEdited):
            signal.connect(self._on_edited)
        self.ui.port_spin.valueChanged.connect(self._on_edited)
        self.ui.sudo_check.toggled.connect(self._on_edited)
        self.ui.auth_combo.currentIndexChanged.connect(self._on_edited)
        self._on_auth_changed()

    # -- choices ------------------------------------------------------------------------------
    def fill_hosts(self, recent: list[RecentHost], last: RecentHost | None) -> None:
        """Offer This computer, recent hosts and SSH config aliases; select the last one used."""
        combo = self.ui.host_combo
        combo.blockSignals(True)
        combo.clear()
        combo.addItem(THIS_COMPUTER, RecentHost("local"))
        seen = {THIS_COMPUTER}
        for entry in recent:
            if entry.host != "local" and entry.label not in seen:
                combo.addItem(entry.label, entry)
                seen.add(entry.label)
        try:
            aliases = config_aliases()
        except (OSError, ValueError):
            aliases = []
        for alias in aliases:
            if alias not in seen:
                combo.addItem(alias, RecentHost(alias))
                seen.add(alias)
        combo.setCurrentIndex(-1)
        combo.setEditText("")
        combo.blockSignals(False)
        if last is not None:
            self.apply_entry(last)

    def knows_hosts(self) -> bool:
        """Whether the list offers more than This computer (an SSH config alias or a recent
        host): else the user is new here and the page says what to type."""
        return self.ui.host_combo.count() > 1

    def apply_entry(self, entry: RecentHost) -> None:
        """Fill the form from a remembered host."""
        self.ui.host_combo.setEditText(THIS_COMPUTER if entry.host == "local" else entry.host)
        self.ui.user_edit.setText(entry.user or "")
        self.ui.port_spin.setValue(entry.port or 0)
        self.ui.key_edit.setText(entry.identity or "")
        self.ui.auth_combo.setCurrentIndex(AUTH_KEY if entry.identity else AUTH_AGENT)
        self.ui.sudo_check.setChecked(entry.sudo)

    def _on_host_activated(self, index: int) -> None:
        entry = self.ui.host_combo.itemData(index)
        if isinstance(entry, RecentHost):
            self.apply_entry(entry)

    def _on_auth_changed(self) -> None:
        auth = self.ui.auth_combo.currentIndex()
        for w in (self.ui.key_label, self.ui.key_edit, self.ui.key_browse_button):
            w.setVisible(auth == AUTH_KEY)
        for w in (self.ui.password_label, self.ui.password_edit):
            w.setVisible(auth == AUTH_PASSWORD)
        self._update_local()

    def _update_local(self) -> None:
        local = self.host_text().lower() in ("local", THIS_COMPUTER.lower())
        for w in (self.ui.user_edit, self.ui.port_spin, self.ui.auth_combo, self.ui.key_edit,
                  self.ui.key_browse_button, self.ui.password_edit):
            w.setEnabled(not local and not self.busy)

    def _on_browse_key(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Private key file", "~/.ssh")
        if path:
            self.ui.key_edit.setText(path)
            self._on_edited()

    def host_text(self) -> str:
        return self.ui.host_combo.currentText().strip()

    def spec(self) -> HostSpec:
        """The form as a HostSpec; raises ZmigrateError for names that are not valid."""
        text = self.host_text()
        if not text:
            raise ZmigrateError("no host given", fix="pick a host from the list or type one")
        if text.lower() in ("local", THIS_COMPUTER.lower()):
            return HostSpec("local", sudo=self.ui.sudo_check.isChecked())
        text, typed_port = split_port(text)
        spec = HostSpec.parse(text, sudo=self.ui.sudo_check.isChecked())
        user = self.ui.user_edit.text().strip()
        if user:
            spec.user = user
        # A port typed with the host is the one meant; else the Port field, else the config's.
        spec.port = typed_port or self.ui.port_spin.value() or None
        auth = self.ui.auth_combo.currentIndex()
        if auth == AUTH_KEY and self.ui.key_edit.text().strip():
            spec.identity = self.ui.key_edit.text().strip()
        if auth == AUTH_PASSWORD:
            spec.password = self.ui.password_edit.text()
        return spec

    # -- connecting ---------------------------------------------------------------------------
    @property
    def connected(self) -> bool:
        return self.host is not None and self.caps is not None

    def start_connect(self) -> None:
        """Connect in the background; the answer lands in `_on_connected` or `_on_failed`."""
        try:
            spec = self.spec()
        except ZmigrateError as exc:
            self.show_error(exc)
            return
        self.release()
        self._generation += 1
        generation = self._generation
        self._set_busy(True, f"Connecting to {markup.escape(spec.label)}…")
        run_task(lambda: connect_and_probe(spec, self.prompts, self.secrets),
                 lambda result: self._on_connected(generation, spec, *result),
                 lambda exc: self._on_failed(generation, exc))

    def adopt(self, host: Host, caps: Capabilities, spec: HostSpec) -> None:
        """Use a host the other side already connected (same machine, same login)."""
        self.release()
        self._generation += 1
        self.host, self.caps, self.connected_spec = host, caps, spec
        self._show_connected()
        self.state_changed.emit()

    def _on_connected(self, generation: int, spec: HostSpec, host: Host,
                      caps: Capabilities) -> None:
        if generation != self._generation:  # the form changed meanwhile: not ours any more
            self.host_released.emit(host)
            return
        self.host, self.caps, self.connected_spec = host, caps, spec
        self._set_busy(False)
        self._show_connected()
        self.state_changed.emit()

    def _show_connected(self) -> None:
        assert self.host is not None and self.caps is not None
        caps = self.caps
        lines = [f"<b>✓ Connected to {markup.escape(self.host.title)}</b>",
                 markup.escape(caps.describe()), *map(markup.escape, self.host.notes),
                 *(f"Link {markup.escape(x)} (toward this computer)" for x in
                   [LINKS.get(self.host)] if x)]
        kind = "ok"
        if not caps.has_zfs:
            lines.append("zfs was not found there: "
                         + markup.escape(capabilities.install_hint(caps.system, "zfs")) + ".")
            kind = "warn"
        if not caps.mbuffer_version:
            lines.append("mbuffer was not found there: "
                         + markup.escape(capabilities.install_hint(caps.system, "mbuffer")) + ".")
            kind = "warn"
        self.ui.status_label.setText("<br>".join(lines))
        style.set_role(self.ui.status_label, "")
        style.set_banner(self.ui.status_frame, kind)

    def _on_failed(self, generation: int, exc: Exception) -> None:
        if generation != self._generation:
            return
        self._set_busy(False)
        self.show_error(exc)
        self.state_changed.emit()

    def show_error(self, exc: BaseException) -> None:
        self.ui.status_label.setText(words.error_html(exc))
        style.set_role(self.ui.status_label, "")
        style.set_banner(self.ui.status_frame, "error")

    def _set_busy(self, busy: bool, text: str = "") -> None:
        self.busy = busy
        self.ui.busy_bar.setVisible(busy)
        self.ui.connect_button.setEnabled(not busy)
        if busy:
            self.ui.status_label.setText(text)
            style.set_role(self.ui.status_label, "muted")
            style.set_banner(self.ui.status_frame, "")
        self._update_local()
        self.state_changed.emit()

    def _on_edited(self) -> None:
        self._update_local()
        if self.busy:
            self._generation += 1  # the running attempt's result will be dropped
            self._set_busy(False)
            self.ui.status_label.setText("Not connected.")
        if self.host is not None:
            self.release()
            self.ui.status_label.setText("Changed: connect again.")
            style.set_role(self.ui.status_label, "muted")
            style.set_banner(self.ui.status_frame, "")
            self.state_changed.emit()

    def release(self) -> None:
        """Let go of the current host; the page decides whether to close it."""
        host, self.host, self.caps, self.connected_spec = self.host, None, None, None
        if host is not None:
            self.host_released.emit(host)

    def close_prompts(self) -> None:
        """Answer open questions with "no": the wizard is closing."""
        self.prompts.close()
        self.dialogs.close()
