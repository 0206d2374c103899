"""Tell the user a long transfer has ended when they are looking at another window.

The decision (`should_notify`) is plain logic; `Notifier` picks the channel: the system tray's
balloon when a tray exists, else `notify_send.notify` (notify-send, on a background thread).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Final

from PySide6.QtWidgets import QStyle, QSystemTrayIcon, QWidget

from . import notify_send

log = logging.getLogger(__name__)

LONG_TRANSFER: Final = 60.0  # seconds: shorter transfers are watched to the end anyway
TRAY_MESSAGE_MS: Final = 10_000


def should_notify(seconds: float, window_active: bool, *,
                  threshold: float = LONG_TRANSFER) -> bool:
    """Notify only for a transfer that ran longer than `threshold` while the window was not
    the active one (the user has turned to something else)."""
    return seconds > threshold and not window_active


class Notifier:
    """Shows "transfer ended" notifications for one window.

    Args:
        window: whose activeness counts.
        tray_available: whether a system tray exists (tests pass a stand-in).
        fallback: the notify-send path, `notify(title, body, wait=False)`-shaped.
    """

    def __init__(self, window: QWidget, *,
                 tray_available: Callable[[], bool] = QSystemTrayIcon.isSystemTrayAvailable,
                 fallback: Callable[..., bool] = notify_send.notify) -> None:
        self.window = window
        self.tray_available = tray_available
        self.fallback = fallback
        self.tray: QSystemTrayIcon | None = None
        self.sent: list[tuple[str, str, str]] = []  # (channel, title, body), newest last

    def transfer_ended(self, title: str, body: str, seconds: float, *,
                       ok: bool = True) -> str | None:
        """Notify if `should_notify`; returns the channel used ("tray", "notify-send") or None.
        """
        if not should_notify(seconds, self.window.isActiveWindow()):
            return None
        return self.announce(title, body, ok=ok)

    def announce(self, title: str, body: str, *, ok: bool = True) -> str:
        """Notify now (a job that ended while no window watched it); the channel used."""
        if self.tray_available():
            tray = self._tray()
            icon = QSystemTrayIcon.MessageIcon.Information if ok \
                else QSystemTrayIcon.MessageIcon.Warning
            tray.showMessage(title, body, icon, TRAY_MESSAGE_MS)
            channel = "tray"
        else:
            self.fallback(title, body, urgency="normal" if ok else "critical", wait=False)
            channel = "notify-send"
        self.sent.append((channel, title, body))
        return channel

    def _tray(self) -> QSystemTrayIcon:
        if self.tray is None:
            icon = self.window.windowIcon()
            if icon.isNull():  # a tray icon without an icon is invisible (and Qt warns)
                icon = self.window.style().standardIcon(QStyle.StandardPixmap.SP_DriveHDIcon)
            self.tray = QSystemTrayIcon(icon, self.window)
            self.tray.setToolTip("zmigrate")
            self.tray.messageClicked.connect(self._raise_window)
        self.tray.show()
        return self.tray

    def _raise_window(self) -> None:
        self.window.showNormal()
        self.window.raise_()
        self.window.activateWindow()

    def close(self) -> None:
        if self.tray is not None:
            self.tray.hide()
