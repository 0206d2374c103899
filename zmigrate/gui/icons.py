"""The application's icon, from the Qt resource compiled out of ui/resources.qrc."""

from __future__ import annotations

from typing import Final

from PySide6.QtGui import QIcon

from .generated import resources_rc  # noqa: F401 - registers the :/zmigrate resources

APP_ID: Final = "io.github.zmigrate.Zmigrate"  # the .desktop file, icon and metainfo name
ICON_PATH: Final = f":/zmigrate/{APP_ID}.svg"


def app_icon() -> QIcon:
    """The zmigrate icon: the installed theme icon if there is one, else the bundled SVG."""
    bundled = QIcon(ICON_PATH)
    return QIcon.fromTheme(APP_ID, bundled)
