"""Page 3: where the copy goes, and a state line saying what will happen there."""

from __future__ import annotations

import html
from dataclasses import dataclass

from PySide6.QtCore import QItemSelection
from PySide6.QtWidgets import QWidget

from ...errors import PreflightError, ZmigrateError
from ...mbuffer import format_size
from ...plan import Options, Plan, Site, make_plan
from ...shell import dataset as check_dataset
from ...zfs import Dataset, Snapshot
from .. import forms, style
from ..generated.ui_destination_page import Ui_DestinationPage
from ..session import Session
from ..settings import Settings
from .base import Page
from .tree_support import DatasetTree


@dataclass(frozen=True, slots=True)
class State:
    """What the destination page concluded.

    kind: "new", "incremental", "conflict" (force may resolve it) or "error".
    """

    kind: str
    text: str
    plan: Plan | None = None
    force_text: str = ""  # set when a checkbox may resolve the conflict


def _snapshots(names: tuple[str, ...], limit: int = 6) -> str:
    shown = ", ".join("@" + n for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def assess(session: Session, destination: str, force: bool) -> State:
    """Decide from the loaded inventories (no I/O) what sending to `destination` would do."""
    s = session
    if s.src_host is None or s.dst_host is None or s.src_caps is None or s.dst_caps is None \
            or s.snapshot is None or s.src_datasets is None or s.dst_datasets is None:
        return State("error", "Waiting for both hosts' datasets.")
    try:
        check_dataset(destination)
    except ZmigrateError as exc:
        return State("error", f"<b>{html.escape(exc.message)}</b>")
    src = Site(s.src_host, s.src_caps, s.src_datasets)
    dst = Site(s.dst_host, s.dst_caps, s.dst_datasets)
    # The transport and port are chosen later; placeholders let the planner check the rest.
    def plan(force_it: bool) -> Plan:
        opts = Options(transport=s.default_transport, force=force_it)
        return make_plan(src, dst, s.snapshot.name if s.snapshot else "", destination, opts,
                         connect_address="127.0.0.1", port=1)

    try:
        p = plan(False)
    except PreflightError as exc:
        text = f"<b>Conflict: {html.escape(exc.message)}.</b>"
        resolvable = "diverged" in exc.message or "with no snapshots" in exc.message
        forced = None
        if resolvable:
            try:
                forced = plan(True)
            except PreflightError:
                forced = None
        if forced is not None:
            if forced.destroys:
                action = (f"Roll back {destination} to @{forced.base}, destroying "
                          f"{_snapshots(forced.destroys)}")
            else:
                action = f"Overwrite the empty dataset {destination}"
            if force:
                return State("conflict", f"<b>{html.escape(action)}</b>, then send "
                             f"{len(forced.arrives)} snapshot(s): "
                             f"{html.escape(_snapshots(forced.arrives))}.", forced, action)
            return State("conflict", text + "<br>Choose another name, or allow this below:",
                         None, action)
        if "no snapshot in common" in exc.message:
            text += "<br>Choose another name: zmigrate never destroys an unrelated dataset."
        elif exc.fix and "--" not in exc.fix:
            text += f"<br>{html.escape(exc.fix[0].upper() + exc.fix[1:])}."
        kind = "conflict" if "already" in exc.message or "common" in exc.message else "error"
        return State(kind, text)
    size = f" (about {format_size(p.estimate)})" if p.estimate else ""
    if p.kind == "full":
        extra = f", with {len(p.arrives)} snapshots" if len(p.arrives) > 1 else ""
        text = (f"<b>New dataset:</b> {html.escape(destination)} will be created from a full "
                f"copy of @{html.escape(s.snapshot.short)}{extra}{size}.")
        return State("new", text, p)
    text = (f"<b>Incremental from the common snapshot @{html.escape(p.base or '')}:</b> "
            f"{len(p.arrives)} snapshot{'s' if len(p.arrives) != 1 else ''} to send "
            f"({html.escape(_snapshots(p.arrives))}){size}.")
    return State("incremental", text, p)


def guess_destination(session: Session) -> tuple[str, str]:
    """(parent, name): a dataset that shares history with the source, else the first pool."""
    s = session
    assert s.snapshot is not None
    src_name = s.snapshot.dataset
    leaf = src_name.rsplit("/", 1)[-1]
    source = next((d for d in s.src_datasets or [] if d.name == src_name), None)
    guids = {x.guid for x in source.snapshots} if source else set()
    for ds in s.dst_datasets or []:
        if ds.name != src_name and "/" in ds.name and guids & {x.guid for x in ds.snapshots}:
            parent, _, name = ds.name.rpartition("/")
            return parent, name
    pools = [d.name for d in s.dst_datasets or [] if "/" not in d.name]
    parent = pools[0] if pools else ""
    if s.same_host and f"{parent}/{leaf}" == src_name:
        leaf += "-copy"
    return parent, leaf


class DestinationPage(Page):
    """The destination tree (datasets only), parent + name fields and the state line."""

    STATE_BANNER = {"new": "ok", "incremental": "info", "conflict": "warn", "error": "error"}

    def __init__(self, session: Session, settings: Settings,
                 parent: QWidget | None = None) -> None:
        super().__init__(session, settings, parent)
        self.ui = Ui_DestinationPage()
        forms.setup(self.ui, self)
        self.tree = DatasetTree(self.ui.dataset_tree, self.ui.filter_edit, self.ui.busy_bar,
                                self.ui.status_label, with_snapshots=False)
        self.ui.dataset_tree.selectionModel().selectionChanged.connect(self._on_selection)
        self.ui.reload_button.clicked.connect(self._reload)
        self.ui.parent_edit.textChanged.connect(self._update_state)
        self.ui.name_edit.textChanged.connect(self._update_state)
        self.ui.force_check.toggled.connect(self._update_state)
        self.ui.force_check.hide()
        self.state = State("error", "")
        self._loaded_for: object = None
        self._guessed_for: object = None

    def initializePage(self) -> None:
        s = self.session
        if s.dst_host is not self._loaded_for or s.dst_datasets is None:
            self._reload()
        else:
            self._apply_guess()

    def _reload(self) -> None:
        s = self.session
        if s.dst_host is None or s.dst_caps is None:
            return
        self._loaded_for = s.dst_host
        self._set_state(State("error", "Reading the destination's datasets…"))
        self.tree.load(s.dst_host, s.dst_caps, self._on_loaded)

    def _on_loaded(self, datasets: list[Dataset]) -> None:
        self.session.dst_datasets = datasets
        self._guessed_for = None
        self._apply_guess()

    def _apply_guess(self) -> None:
        s = self.session
        if s.snapshot is None or s.dst_datasets is None:
            return
        if self._guessed_for is not s.snapshot:
            self._guessed_for = s.snapshot
            parent, name = guess_destination(s)
            self.ui.force_check.setChecked(False)
            self.ui.name_edit.setText(name)
            self.ui.parent_edit.setText(parent)
            if parent:
                self.tree.select(parent)
        self._update_state()

    def _on_selection(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        item = self.tree.current_item()
        if isinstance(item, Dataset):
            self.ui.parent_edit.setText(item.name)
        elif isinstance(item, Snapshot):
            self.ui.parent_edit.setText(item.dataset)

    def destination(self) -> str:
        parent = self.ui.parent_edit.text().strip().strip("/")
        name = self.ui.name_edit.text().strip().strip("/")
        return f"{parent}/{name}" if parent and name else parent or name

    def _update_state(self) -> None:
        if self.tree.loading or self.session.dst_datasets is None:
            return
        force = self.ui.force_check.isChecked()
        self._set_state(assess(self.session, self.destination(), force))

    def _set_state(self, state: State) -> None:
        self.state = state
        self.ui.state_label.setText(state.text)
        style.set_banner(self.ui.state_frame, self.STATE_BANNER[state.kind])
        check = self.ui.force_check
        check.setVisible(bool(state.force_text))
        if state.force_text:
            check.setText(state.force_text)
            check.setAccessibleName(state.force_text)
        elif check.isChecked():
            check.setChecked(False)
        self.completeChanged.emit()

    def isComplete(self) -> bool:
        st = self.state
        if st.plan is None:
            return False
        return not st.force_text or self.ui.force_check.isChecked()

    def validatePage(self) -> bool:
        s = self.session
        s.destination = self.destination()
        s.force = bool(self.state.force_text) and self.ui.force_check.isChecked()
        return self.isComplete()

    def cleanupPage(self) -> None:
        self.tree.cancel()
