"""Text into Qt rich text (labels with <b>, <br>, tables)."""

from __future__ import annotations

import html

from ..engine.errors import ZmigrateError


def escape(text: str) -> str:
    """`text` safe inside Qt rich text.

    Quotes stay as they are: Qt's HTML subset shows `&#x27;`, html.escape's apostrophe,
    literally ("the stream&#x27;s"), and no text here goes into an attribute.
    """
    return html.escape(text, quote=False)


def error_html(exc: BaseException, fix: str | None = None) -> str:
    """An error as the user should read it: what failed, then how to fix it (`fix`, else the
    error's own; words.error_html gives a refusal's in the wizard's words)."""
    if isinstance(exc, ZmigrateError):
        where = f"{escape(exc.host)}: " if exc.host else ""
        text = f"<b>{where}{escape(exc.message)}</b>"
        fix = fix or exc.fix
        if fix:
            text += f"<br>Fix: {escape(fix)}"
        return text
    return f"<b>{escape(type(exc).__name__)}: {escape(str(exc))}</b>"
