"""Page 7: how it went (verified, failed and why, or cancelled), with the plot to keep."""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFileDialog, QWidget

from ...engine.events import Side
from ...engine.tree import TreeJob, own_roots_lines
from ...engine.units import format_size
from .. import forms, markup, style, words
from ..dialogs.confirm import after_stop
from ..generated.ui_done_page import Ui_DonePage
from ..golive.buttons import GoLiveControls, GoLiveTarget
from ..jobs.kept import KeepControls, kept_running
from ..models.tree_table_model import TreeTableModel
from ..plots.axes import elapsed
from ..plots.transfer_plots import TransferPlots
from ..session import Session
from ..settings import Settings
from ..words import verdict_html
from .base import Page


class DonePage(Page):
    """The outcome, the numbers, and buttons to save the plot, export samples or go again.

    The plots are the Transfer page's own widgets, lent with `lend_plots` (already painted, so
    the switch to this page does not stall); without a loan the page makes plots of its own.

    Signals:
        again_requested(): the user wants another transfer with the same hosts.
        history_requested(): the user wants the History window.
        sync_requested(final): run the same tree again (only deltas); final: the source is
            set read-only first.
    """

    again_requested = Signal()
    history_requested = Signal()
    sync_requested = Signal(bool)

    def __init__(self, session: Session, settings: Settings,
                 parent: QWidget | None = None) -> None:
        super().__init__(session, settings, parent)
        self.ui = Ui_DonePage()
        forms.setup(self.ui, self)
        self.plots: TransferPlots | None = None
        self._lent: TransferPlots | None = None
        self._own: TransferPlots | None = None
        style.set_role(self.ui.result_label, "big")
        style.set_banner(self.ui.verdict_frame, "info")
        style.set_role(self.ui.saved_label, "muted")
        for name in ("bytes", "duration", "rate", "snapshots", "check"):
            style.set_role(getattr(self.ui, f"{name}_caption"), "muted")
        self.ui.save_png_button.clicked.connect(self._on_save_png)
        self.ui.export_csv_button.clicked.connect(self._on_export_csv)
        self.ui.again_button.clicked.connect(self.again_requested)
        self.ui.history_button.clicked.connect(self.history_requested)
        self.ui.sync_again_button.clicked.connect(lambda: self.sync_requested.emit(False))
        self.ui.final_sync_button.clicked.connect(lambda: self.sync_requested.emit(True))
        self.datasets: TreeTableModel | None = None
        self.go_live = GoLiveControls(self, self.ui.go_live_button, self.ui.go_back_button,
                                      self.ui.go_live_label,
                                      (self.ui.sync_again_button, self.ui.keep_sync_button,
                                       self.ui.final_sync_button))
        # Keep in sync, and the kept-in-sync line: its keep_requested(interval) is the page's.
        self.keep = KeepControls(self, session, self.ui)
        self.keep.remote_read.connect(self._remote_read)
        self.setFinalPage(True)

    def lend_plots(self, plots: TransferPlots | None) -> None:
        """Show `plots` (the Transfer page's, holding this transfer) from the next
        initializePage on; None makes the page draw plots of its own."""
        self._lent = plots

    def lend_datasets(self, model: TreeTableModel) -> None:
        """The Transfer page's dataset table: what each dataset of a tree came to."""
        self.datasets = model

    def _take_plots(self) -> TransferPlots:
        if self._lent is not None:
            plots = self._lent
            if self._own is not None:
                self._own.rates.hide()
                self._own.fill.hide()
        else:
            if self._own is None:
                self._own = TransferPlots()
            plots = self._own
        if plots.rates.parent() is not self.ui.plot_host:
            plots.place_in(self.ui.plot_host)
        plots.rates.show()
        plots.fill.show()
        self.plots = plots
        return plots

    def initializePage(self) -> None:
        s = self.session
        ui = self.ui
        ui.saved_label.setText("")
        # A tree picked here, or a runner's tree job followed (re-attached: its record says
        # what to run again).
        tree = s.shows_tree and (isinstance(s.job, TreeJob) or s.followed is not None
                                 or s.followed_remote is not None)
        for w in (ui.datasets_label, ui.sync_again_button, ui.final_sync_button):
            w.setVisible(tree)
        self.keep.show_for(tree)
        final = tree and s.summary is not None and s.summary.verified \
            and "source_readonly_since" in s.summary.extra
        self.go_live.show_for(GoLiveTarget.of(s), final)
        ui.datasets_label.setText("")
        summary, error = s.summary, s.error
        plan = s.dataset_plan
        where = markup.escape(plan.destination + ":" + plan.destination_dataset) if plan else ""
        if summary is not None and summary.verified:
            ui.result_label.setText("✓ Transfer complete and verified")
            ui.reason_label.setText(
                f"{where} now holds @{markup.escape(plan.source_snapshot.split('@', 1)[1])}"
                if plan else "")
            kind = "ok"
        elif summary is not None:
            ui.result_label.setText("✗ Transfer finished but could not be verified")
            ui.reason_label.setText("The guids or stream hashes differ: run it again.")
            kind = "error"
        elif s.cancelled:
            ui.result_label.setText("Transfer stopped")
            ui.reason_label.setText(
                f"Both ends were stopped; {after_stop(s.plan)}."
                + (f"<br>{words.error_html(error)}" if error is not None else ""))
            kind = "warn"
        else:
            ui.result_label.setText("✗ Transfer failed")
            ui.reason_label.setText(words.error_html(error) if error is not None
                                    else "No reason given.")
            kind = "error"
        if s.shows_tree:
            kind = self._tree_outcome(kind)
        style.set_banner(ui.result_frame, kind)
        ui.verdict_frame.setVisible(s.verdict is not None)
        if s.verdict is not None:
            ui.verdict_label.setText(verdict_html(s.verdict))
        fill_facts(self.ui, self.session, self.datasets)
        if s.shows_tree and s.summary is not None:
            ui.check_value.setText("each dataset: newest snapshot's guid equal on both sides, "
                                   "its snapshots present, local properties equal")
        plots = self._take_plots()
        if s.store is not None and self._lent is None:
            plots.update_from(s.store.data(Side.SEND), s.store.data(Side.RECEIVE))
        has_samples = s.store is not None and s.store.version > 0
        ui.save_png_button.setEnabled(has_samples)
        ui.export_csv_button.setEnabled(has_samples)

    def _remote_read(self) -> None:
        """A runner host said how its job is now: the outcome's words say whether it is
        kept in sync (they do not offer Sync again then)."""
        if self.session.shows_tree and self.session.summary is not None:
            self._tree_outcome("ok")

    def _tree_outcome(self, kind: str) -> str:
        """Result and per-dataset lines of a tree; returns the banner kind."""
        s, ui = self.session, self.ui
        summary = s.summary
        plan = s.tree_plan
        rows = self.datasets.rows if self.datasets is not None else []
        verified = [r for r in rows if r.state in ("verified", "skipped")]
        if summary is not None and plan is not None:
            since = summary.extra.get("source_readonly_since")
            ui.result_label.setText(f"✓ Tree copied and verified: {len(verified)} dataset"
                                    f"{'s' if len(verified) != 1 else ''}")
            where = markup.escape(f"{plan.destination} now holds @{plan.snapshot}")
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(since))) \
                if isinstance(since, int | float) else ""
            window = summary.extra.get("readonly_seconds")
            held = f" ({window:.1f} s until the copy was checked)" \
                if isinstance(window, int | float) else ""
            ui.reason_label.setText(
                where + (f"<br><b>Final sync:</b> the source has been read-only since {when}"
                         f"{held}; "
                         f"the copy is exactly the source at @{markup.escape(plan.snapshot)}."
                         if when else "" if kept_running(s) else
                         "<br>Sync again to send only what changed since."))
            if plan.vanished:
                ui.reason_label.setText(
                    ui.reason_label.text() + "<br>Gone from the source, kept on the "
                    "destination: " + markup.escape(", ".join(plan.vanished)))
            own = summary.extra.get("own_encryption_roots")
            if isinstance(own, dict) and own:
                rejoin = own_roots_lines({str(k): str(v) for k, v in own.items()})
                ui.reason_label.setText(ui.reason_label.text() + "<br>" + "<br>".join(
                    markup.escape(line) for line in rejoin))
        lines = []
        words = {"verified": "✓ verified (guid equal, snapshots present, properties equal)",
                 "skipped": "✓ already complete (same guid), skipped",
                 "failed": "✗ failed", "vanished": "no longer on the source: kept",
                 "waiting": "not sent", "sending": "interrupted",
                 "received": "received, not verified"}
        for r in rows:
            text = words.get(r.state, r.state)
            detail = f" — {markup.escape(r.detail)}" if r.detail and r.state != "verified" \
                else ""
            size = f", {format_size(r.bytes)} sent" if r.bytes else ""
            lines.append(f"<b>{markup.escape(r.dataset)}</b> → "
                         f"{markup.escape(r.destination)}: {text}{size}{detail}")
        ui.datasets_label.setText("<br>".join(lines))
        return kind

    # -- saving -------------------------------------------------------------------------------
    def save_png(self, path: Path) -> bool:
        """Save both plots, as shown, into a PNG file."""
        ok = self.ui.plot_host.grab().save(str(path), "PNG")
        self.ui.saved_label.setText(f"Saved {markup.escape(str(path))}" if ok
                                    else f"Could not write {markup.escape(str(path))}")
        return bool(ok)

    def export_csv(self, path: Path) -> bool:
        """Write every kept sample of both sides as CSV."""
        store = self.session.store
        if store is None:
            return False
        try:
            path.write_text(store.to_csv())
        except OSError as exc:
            self.ui.saved_label.setText(f"Could not write {markup.escape(str(path))}: "
                                        f"{markup.escape(exc.strerror or str(exc))}")
            return False
        self.ui.saved_label.setText(f"Saved {markup.escape(str(path))}")
        return True

    def _suggested_name(self, ext: str) -> str:
        plan = self.session.dataset_plan
        base = plan.source_snapshot.replace("/", "_").replace("@", "-") if plan else "transfer"
        return str(Path.home() / f"zmigrate-{base}.{ext}")

    def _on_save_png(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save plot", self._suggested_name("png"),
                                              "PNG image (*.png)")
        if path:
            self.save_png(Path(path))

    def _on_export_csv(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export samples",
                                              self._suggested_name("csv"), "CSV (*.csv)")
        if path:
            self.export_csv(Path(path))


def fill_facts(ui: Ui_DonePage, s: Session, datasets: TreeTableModel | None) -> None:
    """The numbers of the transfer (a tree that failed part way: what did arrive)."""
    summary = s.summary
    names = ("bytes", "duration", "rate", "snapshots", "check")
    for row in range(ui.facts_layout.rowCount()):
        ui.facts_layout.setRowVisible(row, True)
    if summary is None:
        for name in names:
            getattr(ui, f"{name}_value").setText("—")
        rows = datasets.rows if s.shows_tree and datasets else []
        got = sum(r.bytes for r in rows if r.state in ("received", "verified"))
        if got:
            # A tree that failed part way: what did arrive, not a dash.
            arrived = sum(1 for r in rows if r.state in ("received", "verified"))
            ui.bytes_value.setText(f"{format_size(got)} in {arrived} of {len(rows)} "
                                   "datasets")
        # Rows of dashes only push the plots out of sight: hide them.
        for name in names:
            if getattr(ui, f"{name}_value").text() == "—":
                ui.facts_layout.setRowVisible(getattr(ui, f"{name}_value"), False)
        return
    ui.bytes_value.setText(f"{format_size(summary.bytes)} ({summary.bytes:,} bytes)")
    ui.duration_value.setText(elapsed(summary.seconds))
    ui.rate_value.setText(f"{format_size(summary.rate)}/s")
    sent = summary.snapshots_sent
    ui.snapshots_value.setText(", ".join("@" + x for x in sent) if sent else "—")
    checks = [f"guid {summary.destination_guid} "
              + ("matches the source" if summary.source_guid == summary.destination_guid
                 else f"differs from the source's {summary.source_guid}")]
    if summary.hash_match is True:
        checks.append("stream MD5 equal on both ends")
    elif summary.hash_match is None:
        checks.append("stream checksums checked by zfs receive")
    if summary.receive_empty_count:
        checks.append(f"receiver ran empty {summary.receive_empty_count}×")
    ui.check_value.setText("; ".join(checks))
