"""The Transport page's listener addresses: where the source connects (Destination address,
for the transports whose destination listens) and the only sender Direct TCP's cleartext
listener accepts (Accept only from). Empty: what the hosts' ssh sessions and routes say."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QLabel, QLineEdit

from ...engine import cmdline
from ...engine.errors import InvalidNameError
from ...engine.transports import Transport, carrier
from ..generated.ui_transport_page import Ui_TransportPage


class ListenerAddresses:
    """The two fields and their labels, enabled for the transports that use them."""

    def __init__(self, ui: Ui_TransportPage, on_edited: Callable[[], None]) -> None:
        self.connect: tuple[QLabel, QLineEdit] = (ui.connect_label, ui.connect_edit)
        self.allow: tuple[QLabel, QLineEdit] = (ui.allow_label, ui.allow_edit)
        for edit in (ui.connect_edit, ui.allow_edit):
            edit.textChanged.connect(on_edited)

    def enable_for(self, transport: Transport) -> None:
        """Destination address where the destination listens; Accept only from where its
        listener knows the sender by address alone (Direct TCP, cleartext)."""
        c = carrier(transport)
        for widget in self.connect:
            widget.setEnabled(c.listens)
        for widget in self.allow:
            widget.setEnabled(c.guarded_by_address)

    def values(self, transport: Transport) -> tuple[str | None, str | None]:
        """(connect, allow) for `transport`: None where a field is empty or unused; raises
        ValueError naming a field that holds no address."""
        c = carrier(transport)
        return (_address(self.connect[1], "destination address") if c.listens else None,
                _address(self.allow[1], "address to accept") if c.guarded_by_address else None)


def _address(edit: QLineEdit, what: str) -> str | None:
    text = edit.text().strip()
    if not text:
        return None
    try:
        return cmdline.address(text)
    except InvalidNameError:
        raise ValueError(f"The {what} is not an IP address or a host name.") from None
