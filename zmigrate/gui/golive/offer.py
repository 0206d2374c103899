"""The Hosts page's go-live offer: once both hosts are connected, the history may hold a final
sync between them that was never brought into service (the app was closed on Done), or a copy
in service to go back from. Go live and Go back then work as on Done, after a restart too."""

from __future__ import annotations

import time

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFrame, QLabel

from zmigrate.engine.golive import record as golive_record
from zmigrate.engine.golive.record import Offer
from zmigrate.engine.history import golive_log
from zmigrate.engine.hosts import Host
from zmigrate.engine.zfs import Capabilities

from .. import markup, style
from ..models.job_table_model import when
from ..threads import run_task
from .buttons import GoLiveControls, GoLiveTarget


def offer_html(offer: Offer, src: str, dst: str) -> str:
    """What the banner says about `offer` (a final sync to go live from, or a live copy)."""
    root, copy = markup.escape(f"{src}:{offer.root}"), markup.escape(f"{dst}:{offer.destination}")
    if offer.live and offer.state != golive_log.LIVE:
        return (f"<b>Going {'live' if offer.state == golive_log.GOING_LIVE else 'back'} from "
                f"{root} to {copy} was cut off</b> ({when(offer.when)}): <i>Go live</i> "
                "finishes going live, <i>Go back</i> undoes exactly what ran.")
    if offer.live:
        return (f"<b>{copy} is live</b> since {when(offer.when)}: the copy of {root} in "
                "service. <i>Go back</i> undoes exactly what going live did.")
    which = f" (transfer #{offer.job_id}, verified {when(offer.when)})" \
        if offer.job_id is not None else ""
    return (f"<b>Ready to go live:</b> the final sync of {root} to {copy}{which} left the "
            "source read-only. <i>Go live</i> brings the copy into service; every command is "
            "shown first.")


class GoLiveOffer(QObject):
    """Reads the history for the two connected hosts (off the GUI thread) and shows the offer."""

    def __init__(self, frame: QFrame, offer_label: QLabel, controls: GoLiveControls) -> None:
        super().__init__(frame)
        self.frame, self.label, self.controls = frame, offer_label, controls
        self.offer: Offer | None = None
        self._pair: tuple[Host, Host] | None = None
        self._gen = 0
        style.set_banner(frame, "info")
        frame.setVisible(False)
        controls.changed.connect(self._on_changed)

    def hosts_changed(self, src: Host | None, src_caps: Capabilities | None, dst: Host | None,
                      dst_caps: Capabilities | None) -> None:
        """Both hosts connected (or one gone): look for an offer between them."""
        pair = (src, dst) if src is not None and dst is not None else None
        if pair == self._pair:
            return
        self._pair = pair
        self._gen += 1
        gen = self._gen
        self.offer = None
        self.frame.setVisible(False)
        if src is None or dst is None or src_caps is None or dst_caps is None:
            return

        def found(offer: Offer | None) -> None:
            if gen != self._gen or offer is None:
                return
            self.offer = offer
            self.label.setText(offer_html(offer, src.label, dst.label))
            target = GoLiveTarget(src, dst, src_caps, dst_caps, offer.root, offer.destination)
            self.controls.show_for(target, True, offer.live,
                                   cut_off=offer.state != golive_log.LIVE)
            self.frame.setVisible(True)

        run_task(lambda: golive_record.offer(src.label, dst.label), found, lambda _e: None)

    def _on_changed(self, live: bool) -> None:
        target = self.controls.target
        if self.offer is None or target is None:
            return
        self.offer = Offer(self.offer.root, self.offer.destination, time.time(), live,
                           None if live else self.offer.job_id)
        self.label.setText(offer_html(self.offer, target.src.label, target.dst.label))
