"""Start the GUI: the QApplication, the style, a last-resort error dialog, and the wizard."""

from __future__ import annotations

import logging
import os
import sys
import time
import traceback
from types import TracebackType

from PySide6.QtWidgets import QApplication, QMessageBox

from . import style
from .icons import APP_ID, app_icon
from .settings import Settings
from .threads import collect_on_gui_thread
from .wizard import MigrationWizard

log = logging.getLogger("zmigrate.gui")
DIALOG_INTERVAL = 10.0  # at most one error dialog per this many seconds


class LastResortHook:
    """sys.excepthook for bugs that escaped every page: log them, show at most one dialog.

    Expected errors belong on their page; this only keeps a bug from killing the app silently,
    without flooding the user when it repeats on every timer tick.
    """

    def __init__(self) -> None:
        self.last_shown = -DIALOG_INTERVAL
        self.box: QMessageBox | None = None

    def __call__(self, kind: type[BaseException], exc: BaseException,
                 tb: TracebackType | None) -> None:
        details = "".join(traceback.format_exception(kind, exc, tb))
        log.error("unexpected error\n%s", details)
        now = time.monotonic()
        if self.box is not None or now - self.last_shown < DIALOG_INTERVAL \
                or QApplication.instance() is None:
            return
        self.last_shown = now
        box = QMessageBox(QMessageBox.Icon.Critical, "zmigrate: unexpected error",
                          f"Something went wrong inside zmigrate: {exc}\n\nThe transfer, if "
                          "one runs, goes on. Please report this with the details.")
        box.setDetailedText(details)
        box.finished.connect(self._closed)
        self.box = box
        box.open()

    def _closed(self) -> None:
        self.box = None


def make_app(argv: list[str]) -> QApplication:
    """The QApplication with zmigrate's names and style (reused if one exists)."""
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(["zmigrate", *argv])
    app.setOrganizationName("zmigrate")
    app.setApplicationName("zmigrate")
    app.setApplicationDisplayName("zmigrate")
    # Ties the windows to resources/io.github.zmigrate.Zmigrate.desktop (Wayland app id).
    app.setDesktopFileName(APP_ID)
    app.setWindowIcon(app_icon())
    app.setStyle("Fusion")
    app.setPalette(app.style().standardPalette())
    app.setStyleSheet(style.STYLE_SHEET)
    collect_on_gui_thread()
    return app


def no_display_reason() -> str | None:
    """Why the wizard cannot open here (a Linux session without a display), or None."""
    if sys.platform.startswith("linux") and not os.environ.get("QT_QPA_PLATFORM") \
            and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        return ("no display to open the wizard on (DISPLAY and WAYLAND_DISPLAY are not set); "
                "run it in a desktop session (or ssh -X), or use the command line: "
                "zmigrate --help")
    return None


def run(argv: list[str]) -> int:
    """Open the migration wizard; returns the exit status."""
    reason = no_display_reason()
    if reason is not None:
        sys.stderr.write(f"error: {reason}\n")
        return 2
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    app = make_app(argv)
    hook = LastResortHook()
    sys.excepthook = hook
    wizard = MigrationWizard(Settings())
    app.aboutToQuit.connect(wizard.shutdown)
    wizard.show()
    try:
        return app.exec()
    finally:
        wizard.shutdown()
        sys.excepthook = sys.__excepthook__
