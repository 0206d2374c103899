"""The Transfer page's line on the way between the buffers: the share of TCP segments the
sending host sent again, and the CPU each end of the way (a TLS end, ssh) got, as last read
(readings/tcp_resent.py, readings/end_cpu.py). The verdict says when one of them is the limit;
this line shows the figures behind it as they come."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

from ...engine import plain_words
from ...engine.events import EndCpu, Resent, Side
from .. import markup, style
from ..job_bridge import JobBridge


class EndsLine:
    """The figures last read, in one muted label (hidden while there are none)."""

    def __init__(self, label: QLabel) -> None:
        self.label = label
        style.set_role(label, "muted")
        self.resent: Resent | None = None
        self.cpu: dict[tuple[Side, str], EndCpu] = {}  # by side and program: the last of each
        self.reset()

    def attach(self, bridge: JobBridge) -> None:
        """Follow `bridge`'s readings afresh; start again where the plots follow another
        dataset of a tree."""
        self.reset()
        bridge.resent.connect(self.on_resent)
        bridge.end_cpu.connect(self.on_end_cpu)
        bridge.verdict_cleared.connect(self.reset)

    def reset(self) -> None:
        """A new transfer, or another dataset followed: nothing read yet."""
        self.resent, self.cpu = None, {}
        self._show()

    def on_resent(self, event: Resent) -> None:
        self.resent = event
        self._show()

    def on_end_cpu(self, event: EndCpu) -> None:
        self.cpu[(event.side, event.program)] = event
        self._show()

    def text(self) -> str:
        """What the line says: the resent share first, then each end's CPU, sender first."""
        parts = [plain_words.resent_now(self.resent)] if self.resent is not None else []
        parts += [plain_words.end_cpu_now(e) for _, e in sorted(
            self.cpu.items(), key=lambda kv: (kv[0][0] is not Side.SEND, kv[0][1]))]
        return "  ·  ".join(p for p in parts if p)

    def _show(self) -> None:
        text = self.text()
        self.label.setText(markup.escape(text))
        self.label.setVisible(bool(text))
