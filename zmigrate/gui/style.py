"""Colours, fonts and the application style sheet, in one place."""

from __future__ import annotations

from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import QWidget

# One colour per stage of the stream; each buffer takes the colour of the process that fills it.
SEND_COLOR = "#2563eb"  # zfs send -> sender mbuffer (blue)
NETWORK_COLOR = "#d97706"  # between the two mbuffers (amber)
RECEIVE_COLOR = "#059669"  # receiver mbuffer -> zfs receive (green)
SENDER_FILL_COLOR = SEND_COLOR
RECEIVER_FILL_COLOR = RECEIVE_COLOR
CEILING_COLOR = "#b91c1c"  # the path's ceiling on the rate plot (dark red, dashed)

STYLE_SHEET = """
QWizard, QWizardPage { background: #fbfbfc; }
QGroupBox { font-weight: 600; border: 1px solid #d9dce1; border-radius: 8px;
            margin-top: 12px; padding-top: 6px; background: #ffffff; }
QGroupBox::title { subcontrol-origin: margin; left: 12px; padding: 0 4px; color: #374151; }
QGroupBox QLabel, QGroupBox QCheckBox, QGroupBox QRadioButton { font-weight: normal; }
QFrame[banner="ok"] { background: #ecfdf5; border: 1px solid #a7f3d0; border-radius: 6px; }
QFrame[banner="info"] { background: #eff6ff; border: 1px solid #bfdbfe; border-radius: 6px; }
QFrame[banner="warn"] { background: #fffbeb; border: 1px solid #fcd34d; border-radius: 6px; }
QFrame[banner="error"] { background: #fef2f2; border: 1px solid #fca5a5; border-radius: 6px; }
QFrame[banner=""] { background: transparent; border: none; }
QLabel[role="muted"] { color: #6b7280; }
QLabel[role="note"] { color: #92400e; }
QLabel[role="value"] { font-weight: 600; }
QLabel[role="alert"] { font-weight: 600; color: #92400e; }
QLabel[role="big"] { font-size: 15pt; font-weight: 600; }
QPlainTextEdit { background: #ffffff; border: 1px solid #d9dce1; border-radius: 6px; }
QTreeView { background: #ffffff; border: 1px solid #d9dce1; border-radius: 6px;
            alternate-background-color: #f6f7f9; }
QProgressBar { border: 1px solid #d1d5db; border-radius: 4px; background: #f3f4f6; height: 10px; }
QProgressBar::chunk { background: #059669; border-radius: 3px; }
"""


def monospace() -> QFont:
    """The system's fixed-width font, for commands and logs."""
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


def set_banner(widget: QWidget, kind: str) -> None:
    """Colour a frame as a banner: ok, info, warn, error, or "" for none."""
    widget.setProperty("banner", kind)
    repolish(widget)


def set_role(widget: QWidget, role: str) -> None:
    """Give a label a text role from the style sheet: muted, note, value, alert, big."""
    widget.setProperty("role", role)
    repolish(widget)


def repolish(widget: QWidget) -> None:
    style = widget.style()
    style.unpolish(widget)
    style.polish(widget)
