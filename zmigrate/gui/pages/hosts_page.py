"""Page 1: connect the source and the destination host, side by side."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtWidgets import QWidget

from zmigrate.engine.hosts.login import HostSpec

from ...engine.hosts import Host
from .. import forms, style, words
from ..generated.ui_hosts_page import Ui_HostsPage
from ..golive.buttons import GoLiveControls
from ..golive.offer import GoLiveOffer
from ..jobs.panel import JobsPanel
from ..session import Session
from ..settings import Settings
from ..threads import run_task
from ..widgets.host_panel import HostPanel
from .base import Page

# The default key files a login tries, as the first-run guidance names them (ssh-keygen makes
# id_ed25519 today; the rarer kinds the login also tries would only lengthen the sentence).
DEFAULT_KEYS = ("id_ed25519", "id_ecdsa", "id_rsa")


def first_run_html() -> str:
    """The first-run guidance, naming the agent and default keys this user has."""
    ssh_dir = Path("~/.ssh").expanduser()  # where paramiko, which logs in, looks ($HOME)
    found = [name for name in DEFAULT_KEYS if (ssh_dir / name).is_file()]
    return words.first_run_html(DEFAULT_KEYS, bool(os.environ.get("SSH_AUTH_SOCK")), found)


def _same_login(a: HostSpec, b: HostSpec) -> bool:
    return (a.host, a.user, a.port, a.identity, a.sudo) == (b.host, b.user, b.port, b.identity,
                                                           b.sudo)


class HostsPage(Page):
    """Two HostPanels; Next is enabled once both ends are connected and probed."""

    def __init__(self, session: Session, settings: Settings,
                 parent: QWidget | None = None) -> None:
        super().__init__(session, settings, parent)
        self.ui = Ui_HostsPage()
        forms.setup(self.ui, self)
        style.set_role(self.ui.hint_label, "muted")
        # One memory for both sides and the window's runner hosts: a host asks its password
        # once.
        self.secrets = session.logins.memory
        self.source = HostPanel("source", secrets=self.secrets)
        self.destination = HostPanel("destination", secrets=self.secrets)
        for host_widget, panel in ((self.ui.source_panel_host, self.source),
                                   (self.ui.destination_panel_host, self.destination)):
            forms.embed(host_widget, panel)
            panel.state_changed.connect(self._on_panel_state_changed)
            panel.host_released.connect(self._on_host_released)
        self.source.connect_requested.connect(lambda: self._connect(self.source))
        self.destination.connect_requested.connect(lambda: self._connect(self.destination))
        ui = self.ui
        self.go_live = GoLiveControls(self, ui.go_live_button, ui.go_back_button,
                                      ui.go_live_label)
        self.go_live_offer = GoLiveOffer(ui.go_live_frame, ui.go_live_offer_label, self.go_live)
        self.jobs = JobsPanel(session.logins)
        ui.page_layout.insertWidget(0, self.jobs)
        recent = settings.recent_hosts()
        self.source.fill_hosts(recent, settings.last_host("source"))
        self.destination.fill_hosts(recent, settings.last_host("destination"))
        self.setTabOrder(self.source.ui.connect_button, self.destination.ui.host_combo)
        self.first_run = not self.source.knows_hosts()
        self.ui.first_run_frame.setVisible(self.first_run)
        if self.first_run:
            self.ui.first_run_label.setText(first_run_html())
            style.set_banner(self.ui.first_run_frame, "info")
            self.ui.hint_label.setText(words.HOST_KEYS_HINT)

    def initializePage(self) -> None:
        self.jobs.refresh()

    def panels(self) -> tuple[HostPanel, HostPanel]:
        return self.source, self.destination

    def _connect(self, panel: HostPanel) -> None:
        other = self.destination if panel is self.source else self.source
        try:
            spec = panel.spec()
        except Exception:  # noqa: BLE001 - start_connect shows the problem on the panel
            panel.start_connect()
            return
        if other.connected and other.connected_spec is not None \
                and _same_login(spec, other.connected_spec):
            assert other.host is not None and other.caps is not None
            panel.adopt(other.host, other.caps, spec)  # one session serves both ends
        else:
            panel.start_connect()

    def _on_panel_state_changed(self) -> None:
        s = self.session
        old = (s.src_host, s.dst_host)
        s.src_host, s.src_caps = self.source.host, self.source.caps
        s.dst_host, s.dst_caps = self.destination.host, self.destination.caps
        s.src_spec, s.dst_spec = self.source.connected_spec, self.destination.connected_spec
        for host in (s.src_host, s.dst_host):
            if host is not None:
                s.adopt(host)
        if old[0] is not s.src_host:
            s.src_datasets = None
        if old[1] is not s.dst_host:
            s.dst_datasets = None
        for panel, side in ((self.source, "source"), (self.destination, "destination")):
            if panel.connected and panel.connected_spec is not None:
                self.settings.remember_host(panel.connected_spec, side)
        self.go_live_offer.hosts_changed(s.src_host, s.src_caps, s.dst_host, s.dst_caps)
        self.completeChanged.emit()

    def _on_host_released(self, host: Host) -> None:
        self._on_panel_state_changed()
        if self.session.release(host) or all(h is not host for h in self.session.owned):
            run_task(host.close, lambda _r: None, lambda _e: None)

    def isComplete(self) -> bool:
        return self.source.connected and self.destination.connected

    def validatePage(self) -> bool:
        self.settings.sync()
        return True

    def close_prompts(self) -> None:
        """Answer open questions with "no" and forget this session's passwords: the wizard is
        closing."""
        for panel in self.panels():
            panel.close_prompts()
        self.secrets.clear()
