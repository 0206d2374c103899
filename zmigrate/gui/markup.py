"""Text into Qt rich text (labels with <b>, <br>, tables)."""

from __future__ import annotations

import html


def escape(text: str) -> str:
    """`text` safe inside Qt rich text.

    Quotes stay as they are: Qt's HTML subset shows `&#x27;`, html.escape's apostrophe,
    literally ("the stream&#x27;s"), and no text here goes into an attribute.
    """
    return html.escape(text, quote=False)
