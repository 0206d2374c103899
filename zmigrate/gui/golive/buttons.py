"""Done page's *Go live* and *Go back*: the copy of a final sync brought into service, every
command shown before it runs; the engine's go-live flow runs off the GUI thread."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QInputDialog, QLabel, QMessageBox, QPushButton, QWidget

from zmigrate.engine import cmdline, losses, plain_words
from zmigrate.engine.errors import PreflightError, PreflightReason
from zmigrate.engine.golive import GoLivePlan, Step
from zmigrate.engine.golive import record as golive_record
from zmigrate.engine.golive.carry_back import Writes
from zmigrate.engine.golive.record import WentBack
from zmigrate.engine.history import golive_log, recent_runs
from zmigrate.engine.hosts import Host
from zmigrate.engine.losses import Loss
from zmigrate.engine.units import format_size
from zmigrate.engine.zfs import Capabilities

from .. import markup, words
from ..session import Session
from ..threads import run_task


def back_text(writes: Writes) -> str:
    """Go back's question, with what was written to the live copy."""
    if not writes.changed:
        return ("Nothing was written to the copy while it was live. Going back takes it out "
                "of service and serves the source again, as it was before the final sync.")
    names = ", ".join(f"{name} ({format_size(n)})" for name, n in writes.changed)
    return (f"Since the copy went live, {format_size(writes.bytes)} was written to it, in "
            f"{len(writes.changed)} dataset(s): {names}.\n\nGoing back first carries these "
            "writes back to the source (a snapshot of the copy, sent back), then serves the "
            "source again. Leaving them on the copy keeps them there only, under a snapshot: "
            "the source is then served without them.")


def hidden_text(lost: Sequence[Loss], source: str, destination: str) -> str:
    """What going live or back hides, by host (nothing is destroyed), to add to its box."""
    parts = [f"Will be hidden on {host}: " + "; ".join(lines) + "."
             for host, lines in plain_words.losses_by_host(lost, source, destination,
                                                           hidden=True)]
    return "".join("\n\n" + part for part in parts)


def undo_lines(steps: Sequence[Step]) -> str:
    """Going back's commands, last step's undo first, each under what it undoes."""
    return "\n".join(f"# on the {s.side}: undo {s.what}\n{cmdline.join(s.undo)}"
                     for s in reversed(steps) if s.undo is not None)


def went_back_text(went: WentBack) -> str:
    """What going back did, the copy's writes included."""
    if went.copy_gone:
        return ("Back: the source is served as before. The copy was gone, and what was written "
                "to it while live with it.")
    text = "Back: the copy is out of service again; the source is served as before."
    if went.writes.changed and went.left:
        text += (f" The {format_size(went.writes.bytes)} written while live stays on the copy "
                 f"only, under the snapshot @{went.snapshot}.")
    elif went.writes.changed:
        text += (f" The {format_size(went.writes.bytes)} written while live was carried back: "
                 "it is on the source.")
    return text


@dataclass(frozen=True, slots=True)
class GoLiveTarget:
    """A copied tree's two ends: what going live (and back) works on."""

    src: Host
    dst: Host
    src_caps: Capabilities
    dst_caps: Capabilities
    root: str
    destination: str

    @staticmethod
    def of(session: Session) -> GoLiveTarget | None:
        """The wizard's tree and hosts, once it has both (None before)."""
        s = session
        if s.src_host is None or s.dst_host is None or s.src_caps is None or \
                s.dst_caps is None or s.tree is None or not s.destination:
            return None
        return GoLiveTarget(s.src_host, s.dst_host, s.src_caps, s.dst_caps, s.tree.root,
                            s.destination)


class GoLiveControls(QObject):
    """The two buttons and the line that says what they did."""

    changed = Signal(bool)  # after going live (True) or back (False)

    def __init__(self, parent: QWidget, live: QPushButton, back: QPushButton,
                 said: QLabel, syncs: tuple[QWidget, ...] = ()) -> None:
        super().__init__(parent)
        self.parent_widget, self.live, self.back, self.said = parent, live, back, said
        self.syncs = syncs  # hidden while the copy is live: a sync would overwrite it
        self.box: QMessageBox | None = None
        self.back_box: QMessageBox | None = None  # Go back's confirmation, while open
        self.folder_dialog: QInputDialog | None = None
        self.mount_root: str | None = None  # chosen with "Under another folder…"
        self.target: GoLiveTarget | None = None
        live.clicked.connect(self._on_live)
        back.clicked.connect(self._on_back)

    def show_for(self, target: GoLiveTarget | None, final_synced: bool,
                 live: bool | None = None, cut_off: bool = False) -> None:
        """Offer Go live after a verified final sync (Go back once it is live; both for one
        cut off halfway, to finish or undo). `live`: known already (else read from the
        history)."""
        self.target = target
        final_synced = final_synced and target is not None
        if live is None and final_synced and target is not None:
            state = golive_record.state(target.dst, target.destination)
            live, cut_off = state is not None, state not in (None, golive_log.LIVE)
        live = bool(live) and final_synced
        self.live.setVisible(final_synced and (not live or cut_off))
        self.back.setVisible(live)
        if live:
            for w in self.syncs:
                w.setVisible(False)
        self.said.setVisible(False)

    def _hosts(self) -> tuple[Host, Host, str, str]:
        t = self.target
        assert t is not None
        return t.src, t.dst, t.root, t.destination

    def _on_live(self) -> None:
        self._prepare(None)

    def _prepare(self, mount_root: str | None) -> None:
        """Read both hosts off the GUI thread, then show the plan (mounted where the source
        was, or under `mount_root`; the transfer's own mount root was for the copy only)."""
        src, dst, root, destination = self._hosts()
        assert self.target is not None
        caps = self.target.src_caps, self.target.dst_caps
        self.mount_root = mount_root
        self._busy("Reading both hosts' properties…")
        run_task(lambda: golive_record.prepare(src, dst, *caps, root, destination,
                                               mount_root=mount_root,
                                               records=recent_runs(destination)),
                 self._confirm, self._refused)

    def _refused(self, exc: Exception) -> None:
        """A copy that would mount over what the destination uses (two sessions on one
        machine, say) is offered a folder of its own, the refusal said beside the question."""
        self._failed(exc)
        if isinstance(exc, PreflightError) and exc.reason is PreflightReason.MOUNT_COLLISION:
            self._ask_folder()

    def _confirm(self, plan: GoLivePlan) -> None:
        lines = [f"# on the {st.side}: {st.what}\n{cmdline.join(st.argv)}"
                 for st in plan.remaining]
        where = (f" The copy is mounted under {self.mount_root}." if self.mount_root else
                 " The copy is mounted where the source was.")
        text = ("Going live runs these commands (each is undone by Go back)." + where
                if lines else "Nothing to change: the copy is already as the source was.")
        if plan.record is not None:
            text = (f"Going live was cut off after {plan.done} of {len(plan.steps)} steps (the "
                    "history holds what ran). These commands finish it; Go back undoes what "
                    "ran instead.")
        src, dst, _, _ = self._hosts()
        text += hidden_text(plan.destroys, src.label, dst.label)
        box = QMessageBox(QMessageBox.Icon.Question, "Go live", text,
                          QMessageBox.StandardButton.NoButton, self.parent_widget)
        box.setDetailedText("\n".join(lines + [f"# {n}" for n in plan.notes]))
        run = box.addButton("Run them", QMessageBox.ButtonRole.AcceptRole)
        elsewhere = box.addButton("Under another folder…", QMessageBox.ButtonRole.ActionRole)
        box.addButton("Cancel", QMessageBox.ButtonRole.RejectRole)
        self.box = box

        def answered(_result: int) -> None:
            self.box = None
            box.deleteLater()
            if box.clickedButton() is run and (plan.remaining or plan.record is not None):
                self._apply(plan)
            elif box.clickedButton() is elsewhere:
                self._ask_folder()
            else:
                self._idle()

        box.finished.connect(answered)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.open()

    def _ask_folder(self) -> None:
        """The folder on the destination to mount the copy under, then the plan again."""
        dialog = QInputDialog(self.parent_widget)
        self.folder_dialog = dialog
        dialog.setWindowTitle("Go live under another folder")
        dialog.setLabelText("Mount the copy under this folder on the destination (its root "
                            "there, its datasets below it):")
        dialog.setTextValue(self.mount_root or "/mnt/")

        def done(result: int) -> None:
            self.folder_dialog = None
            dialog.deleteLater()
            folder = dialog.textValue().strip()
            if result and folder:
                self._prepare(folder)
            else:
                self._idle()

        dialog.finished.connect(done)
        dialog.open()

    def _apply(self, plan: GoLivePlan) -> None:
        src, dst, _, _ = self._hosts()
        self._busy("Going live…")
        run_task(lambda: golive_record.apply(plan, src, dst),
                 lambda _id: self._done(True,
                     "Live: the copy is in service; what ran is in the history, and Go back "
                     "undoes exactly that. " + " ".join(plan.notes)), self._failed)

    def _on_back(self) -> None:
        """Measure what was written to the live copy (off the GUI thread), then confirm; a
        copy gone (destroyed by hand) is offered a way back without it."""
        src, dst, _, destination = self._hosts()
        self._busy("Measuring what was written to the copy while it was live…")

        def read() -> tuple[list[Step], Writes | None, list[str]]:
            if golive_record.copy_gone(dst, destination):
                return golive_record.recorded(dst, destination, copy_gone=True), None, []
            return (golive_record.recorded(dst, destination),
                    golive_record.preview(src, dst, destination),
                    golive_record.mounted_besides(dst, destination))

        def confirm(found: tuple[list[Step], Writes | None, list[str]]) -> None:
            steps, writes, besides = found
            if writes is None:
                self._confirm_without(steps)
            else:
                self._confirm_back(steps, writes, besides)

        run_task(read, confirm, self._failed)

    def _confirm_without(self, steps: list[Step]) -> None:
        """The copy is gone: going back undoes the source's steps alone, once asked."""
        _, dst, _, destination = self._hosts()
        box = QMessageBox(
            QMessageBox.Icon.Warning, "Go back without the copy",
            f"The copy {destination} no longer exists on {dst.label} (destroyed or renamed "
            "since it went live). If it was renamed, cancel, rename it back and press Go back "
            "again. Going back without it undoes the source's own steps (its mounts, canmount "
            "and readonly as they were); what was written to the copy while live is lost "
            "with it.", QMessageBox.StandardButton.NoButton, self.parent_widget)
        box.setDetailedText(undo_lines(steps))
        run = box.addButton("Go back without the copy", QMessageBox.ButtonRole.AcceptRole)
        box.setDefaultButton(box.addButton("Cancel", QMessageBox.ButtonRole.RejectRole))
        self.back_box = box

        def answered(_result: int) -> None:
            self.back_box = None
            box.deleteLater()
            if box.clickedButton() is run:
                self._back(False, without_copy=True)
            else:
                self._idle()

        box.finished.connect(answered)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.open()

    def _confirm_back(self, steps: list[Step], writes: Writes,
                      besides: list[str] | None = None) -> None:
        """Going back, with the figures: the copy's writes carried back (the default) or,
        chosen here, left on the copy under a named snapshot."""
        src, dst, _, _ = self._hosts()
        hidden = hidden_text(losses.going_back(steps, leave_writes=False,
                                               mounted_besides=besides or ()),
                             src.label, dst.label)
        box = QMessageBox(QMessageBox.Icon.Question, "Go back", back_text(writes) + hidden,
                          QMessageBox.StandardButton.NoButton, self.parent_widget)
        box.setDetailedText(undo_lines(steps))
        if writes.changed:
            run = box.addButton("Carry them back, then go back",
                                QMessageBox.ButtonRole.AcceptRole)
            leave = box.addButton("Leave them on the copy", QMessageBox.ButtonRole.ActionRole)
        else:
            run, leave = box.addButton("Go back", QMessageBox.ButtonRole.AcceptRole), None
        box.addButton("Cancel", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(run)
        self.back_box = box

        def answered(_result: int) -> None:
            self.back_box = None
            box.deleteLater()
            if box.clickedButton() is run:
                self._back(False)
            elif leave is not None and box.clickedButton() is leave:
                self._back(True)
            else:
                self._idle()

        box.finished.connect(answered)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.open()

    def _back(self, leave: bool, *, without_copy: bool = False) -> None:
        src, dst, _, destination = self._hosts()
        self._busy("Going back…")
        run_task(lambda: golive_record.back(src, dst, destination, leave_writes=leave,
                                            copy_gone=without_copy),
                 lambda went: self._done(False, went_back_text(went)), self._failed)

    def _busy(self, text: str) -> None:
        self.live.setEnabled(False)
        self.back.setEnabled(False)
        self.said.setText(text)
        self.said.setVisible(True)

    def _idle(self) -> None:
        self.live.setEnabled(True)
        self.back.setEnabled(True)
        self.said.setVisible(False)

    def _done(self, live: bool, text: str) -> None:
        self._idle()
        for w in self.syncs:
            w.setVisible(True)  # shown again once back (show_for hides them while live)
        self.show_for(self.target, True, live)
        self.said.setText(markup.escape(text))
        self.said.setVisible(True)
        self.changed.emit(live)

    def _failed(self, exc: Exception) -> None:
        self._idle()
        if self.target is not None:  # cut off halfway: both ways offered, from the history
            self.show_for(self.target, True)
        self.said.setText(words.error_html(exc))
        self.said.setVisible(True)
