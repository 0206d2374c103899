"""`zmigrate --self-test`: prove a build can show its window and draw a plot, then exit.

Meant for packagers and CI (packaging/build.sh runs it on the frozen app): it creates the
QApplication (offscreen unless QT_QPA_PLATFORM says otherwise) as the app does, builds the real
main window (the wizard), draws a pyqtgraph curve in a window of its own, renders both with
grab() and checks the pixels. It prints "self-test ok" and returns 0, or names what failed
on stderr and returns 1. Everything Qt is imported inside `run()`.
"""

from __future__ import annotations

import os
import sys
import tempfile
import traceback
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from PySide6.QtGui import QImage
    from PySide6.QtWidgets import QApplication, QWidget

TIMEOUT_MS = 30_000
CURVE_COLOR = (255, 0, 0)


class SelfTestError(Exception):
    """A check of the self-test failed."""


def _report(out: TextIO, text: str) -> None:
    out.write(text + "\n")
    out.flush()


def run(argv: list[str] | None = None, out: TextIO | None = None,
        err: TextIO | None = None) -> int:
    """Run the self-test; 0 when the window showed and the plot drew, else 1."""
    out = out or sys.stdout
    err = err or sys.stderr
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    try:
        from PySide6.QtCore import QSettings

        import zmigrate.gui  # noqa: F401  (binds pyqtgraph to PySide6 before it is imported)
    except Exception as exc:  # noqa: BLE001 - a broken bundle must say why, not crash
        _report(err, f"self-test FAILED: cannot import Qt: {exc!r}")
        return 1
    with tempfile.TemporaryDirectory(prefix="zmigrate-selftest-") as scratch:
        # Neither read nor write the user's settings.
        for fmt in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
            QSettings.setPath(fmt, QSettings.Scope.UserScope, scratch)
        try:
            app = _application(argv or [])
        except Exception as exc:  # noqa: BLE001
            _report(err, f"self-test FAILED: cannot create the application: {exc!r}")
            return 1
        return _run_checks(app, out, err)


def _application(argv: list[str]) -> QApplication:
    """The app as zmigrate.gui.app makes it (names, style)."""
    from .app import make_app

    return make_app(argv)


def _run_checks(app: QApplication, out: TextIO, err: TextIO) -> int:
    from PySide6.QtCore import QTimer

    result: dict[str, Any] = {"code": 1, "lines": []}
    keep: list[QWidget] = []

    def checks() -> None:
        try:
            result["lines"] = _checks(app, keep)
            result["code"] = 0
        except Exception as exc:  # noqa: BLE001 - reported, and the exit code says it failed
            result["lines"] = [f"self-test FAILED: {exc}",
                               *traceback.format_exc().rstrip().splitlines()]
        finally:
            app.exit(0)

    def too_slow() -> None:
        result["lines"] = [f"self-test FAILED: no result after {TIMEOUT_MS / 1000:.0f} s"]
        app.exit(1)

    QTimer.singleShot(0, checks)
    QTimer.singleShot(TIMEOUT_MS, too_slow)
    app.exec()
    for w in keep:
        shutdown = getattr(w, "shutdown", None)
        if callable(shutdown):
            shutdown()
        w.close()
        w.deleteLater()
    stream = out if result["code"] == 0 else err
    for line in result["lines"]:
        _report(stream, line)
    return int(result["code"])


def _checks(app: QApplication, keep: list[QWidget]) -> list[str]:
    from .wizard import MigrationWizard

    lines = [f"platform {app.platformName()}"]
    window = MigrationWizard()
    keep.append(window)
    window.show()
    image = _grab(window)
    _require_content(image, "the main window")
    lines.append(f"main window: {type(window).__name__} {image.width()}x{image.height()}")
    plot_window, plot_image = _plot_window()
    keep.append(plot_window)
    lines.append(f"plot: {plot_image.width()}x{plot_image.height()}, curve drawn")
    lines.append("self-test ok")
    return lines


def _plot_window() -> tuple[QWidget, QImage]:
    """A minimal main window with a pyqtgraph plot of a red curve, rendered and checked."""
    import pyqtgraph as pg
    from PySide6.QtWidgets import QMainWindow

    window = QMainWindow()
    window.setWindowTitle("zmigrate self-test")
    plot = pg.PlotWidget(background="w")
    xs = [float(i) for i in range(100)]
    ys = [50.0 + 40.0 * ((i % 20) / 20.0) for i in range(100)]
    plot.plot(xs, ys, pen=pg.mkPen(CURVE_COLOR, width=3))
    window.setCentralWidget(plot)
    window.resize(480, 320)
    window.show()
    image = _grab(plot)
    _require_content(image, "the plot")
    if not _has_color(image, CURVE_COLOR):
        raise SelfTestError("the plot rendered, but the curve is not in it")
    return window, image


def _grab(widget: QWidget) -> QImage:
    from PySide6.QtWidgets import QApplication

    QApplication.sendPostedEvents()
    pixmap = widget.grab()
    if pixmap.isNull() or pixmap.width() == 0 or pixmap.height() == 0:
        raise SelfTestError(f"grab() of {type(widget).__name__} gave an empty image")
    return pixmap.toImage()


def _require_content(image: QImage, what: str) -> None:
    """More than one color in the image: something was painted."""
    first = image.pixel(0, 0)
    step_x = max(1, image.width() // 64)
    step_y = max(1, image.height() // 64)
    for y in range(0, image.height(), step_y):
        for x in range(0, image.width(), step_x):
            if image.pixel(x, y) != first:
                return
    raise SelfTestError(f"{what} rendered as a single flat color")


def _has_color(image: QImage, rgb: tuple[int, int, int], tolerance: int = 40) -> bool:
    for y in range(image.height()):
        for x in range(image.width()):
            c = image.pixelColor(x, y)
            if (abs(c.red() - rgb[0]) <= tolerance and abs(c.green() - rgb[1]) <= tolerance
                    and abs(c.blue() - rgb[2]) <= tolerance):
                return True
    return False
