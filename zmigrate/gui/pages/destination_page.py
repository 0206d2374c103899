"""Page 3: where the copy goes, and a state line saying what will happen there.

For a tree the state line is the engine's own tree plan (read off the GUI thread): how many
datasets go in full or as a catch-up, and its mountpoint collision check.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, replace

from PySide6.QtCore import QItemSelection
from PySide6.QtWidgets import QWidget

from zmigrate.engine.cmdline import dataset as check_dataset

from ...engine.destination import Emptiness
from ...engine.errors import PreflightError, PreflightReason, ZmigrateError
from ...engine.job.outlook import Outcome, destination_outlook, partial_ways
from ...engine.plan import Plan, Site
from ...engine.tree import TreePlan
from ...engine.units import format_size
from ...engine.zfs import Dataset, ResumeInfo, Snapshot
from .. import forms, markup, style, words
from ..generated.ui_destination_page import Ui_DestinationPage
from ..readers.emptiness import EmptinessFound, EmptinessReader, needs_judging
from ..readers.partial import PartialFound, PartialReader
from ..session import Session
from ..settings import Settings
from ..threads import LatestTask
from ..widgets.dataset_tree import DatasetTree
from .base import Page

# What the destination page learnt of an interrupted receive: its decoded token, or why not.


@dataclass(frozen=True, slots=True)
class Partial:
    """An interrupted receive at the destination, and the two ways on: resume or discard.

    A plan is None where that way is not possible; `*_text` is the choice's label then.
    """

    resume_text: str
    discard_text: str
    resume_plan: Plan | None
    discard_plan: Plan | None
    note: str = ""  # what each choice does to the destination


@dataclass(frozen=True, slots=True)
class State:
    """What the destination page concluded.

    kind: "new", "incremental", "conflict" (force may resolve it), "partial" (an interrupted
    transfer: the user resumes or discards it) or "error".
    """

    kind: str
    text: str
    plan: Plan | None = None
    force_text: str = ""  # set when a checkbox may resolve the conflict
    partial: Partial | None = None  # set when an interrupted receive waits for a choice


def _snapshots(names: tuple[str, ...], limit: int = 6) -> str:
    shown = ", ".join("@" + n for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def partial_token(session: Session, destination: str) -> str | None:
    """The resume token the destination's inventory shows for `destination`, if any."""
    ds = next((d for d in session.dst_datasets or [] if d.name == destination), None)
    return ds.resume_token if ds is not None else None


def _assess_partial(session: Session, src: Site, dst: Site, destination: str,
                    found: PartialFound | None) -> State:
    """The state line and both choices for an interrupted receive into `destination`."""
    assert session.snapshot is not None
    snapshot = session.snapshot.name
    if found is None:
        return State("partial", "<b>An interrupted transfer left a partial receive here.</b> "
                     "Reading what it holds…")

    info = found if isinstance(found, ResumeInfo) else None
    ways = partial_ways(src, dst, snapshot, destination, session.default_transport, info)
    if ways.changed:
        return State("error", "<b>The interrupted transfer here changed since the list was "
                     "read.</b><br>Reload the destination's datasets.")
    if info is not None:
        total = info.total
        amount = format_size(info.received) + (f" of {format_size(total)}" if total else "")
        to = info.toname.split("@", 1)[-1]
        text = (f"<b>An interrupted transfer left {amount} here</b> (to @{markup.escape(to)}).")
        if ways.resume is not None:
            rest = f" ({format_size(ways.resume.estimate)})" if ways.resume.estimate else ""
            resume_text = f"Re&sume: send only the rest{rest}"
        elif ways.resume_refused is not None:
            resume_text = ("Re&sume is not possible: "
                           + ways.resume_refused.message.replace('&', '&&'))
            if info.toname != snapshot:
                resume_text += f" (pick @{to} on the Source page to resume it)"
    else:
        assert isinstance(found, ZmigrateError)
        text = ("<b>An interrupted transfer left a partial receive here</b>, but it could not "
                f"be read: {markup.escape(found.message)}.")
        resume_text = "Re&sume is not possible: the partial receive could not be read"
    what = "the snapshots already there stay" if ways.keeps_snapshots else \
        "nothing else on the destination is touched"
    if ways.discard is not None:
        again = "send everything again" if ways.discard.kind == "full" else \
            f"send {len(ways.discard.arrives)} snapshot(s) again"
        discard_text = f"Dis&card the partial receive and {again} (zfs receive -A)"
    else:
        refused = ways.discard_refused.message if ways.discard_refused else ""
        discard_text = f"Dis&card is not possible: {refused.replace('&', '&&')}"
    text += "<br>Choose what to do with it:"
    note = (f"Resuming sends only what is missing. Discarding destroys only the partially "
            f"received data; {what}.")
    return State("partial", text, None, "",
                 Partial(resume_text, discard_text, ways.resume, ways.discard, note))


TREE_PLAN_DELAY_MS = 300
FORCE_LINE = 90  # characters a line of the force check box holds at the window's width


def check_box_text(sentence: str) -> str:
    """`sentence` on lines of its own (a check box does not wrap its text: it would be cut off),
    a name's `&` kept as text, not a shortcut."""
    return textwrap.fill(sentence, FORCE_LINE).replace("&", "&&")


def assess(session: Session, destination: str, force: bool,
           partial: PartialFound | None = None,
           emptiness: EmptinessFound | None = None) -> State:
    """Decide from the loaded inventories (no I/O) what sending to `destination` would do.

    `partial` is what was read of the destination's interrupted receive (if its inventory
    shows a resume token); without it such a destination says it is being read. `emptiness`
    is the engine's judgement of an existing destination without snapshots: replacing its
    content is offered only once it is known, worded with what it holds.
    """
    s = session
    if s.src_host is None or s.dst_host is None or s.src_caps is None or s.dst_caps is None \
            or s.snapshot is None or s.src_datasets is None or s.dst_datasets is None:
        return State("error", "Waiting for both hosts' datasets.")
    try:
        check_dataset(destination)
    except ZmigrateError as bad:
        return State("error", f"<b>{markup.escape(bad.message)}</b>")
    src = Site(s.src_host, s.src_caps, s.src_datasets)
    dst = Site(s.dst_host, s.dst_caps, s.dst_datasets)
    if partial_token(s, destination):
        return _assess_partial(s, src, dst, destination, partial)
    judged = emptiness if isinstance(emptiness, Emptiness) else None
    seen = destination_outlook(src, dst, s.snapshot.name, destination, s.default_transport,
                               emptiness=judged)
    if seen.refusal is not None:
        exc = seen.refusal
        text = f"<b>Conflict: {markup.escape(exc.message)}.</b>"
        if exc.reason is PreflightReason.NOT_EMPTY and judged is None \
                and needs_judging(s, destination) is not None:
            return _unjudged(destination, text,
                             emptiness if isinstance(emptiness, ZmigrateError) else None)
        forced = seen.forced
        if forced is not None:
            if forced.rolled_back:
                action = (f"Roll back {destination} to @{forced.base}, destroying "
                          f"{_snapshots(forced.rolled_back)}")
            else:
                assert forced.replaces is not None  # judged: never "empty" unless it is
                action = words.overwrite_choice(forced.replaces)
            if force:
                return State("conflict", f"<b>{markup.escape(action)}</b>, then send "
                             f"{len(forced.arrives)} snapshot(s): "
                             f"{markup.escape(_snapshots(forced.arrives))}.", forced, action)
            return State("conflict", text + "<br>Choose another name, or allow this below:",
                         None, action)
        if exc.reason is PreflightReason.NO_COMMON_SNAPSHOT:
            text += "<br>Choose another name: zmigrate never destroys an unrelated dataset."
        elif (fix := refusal_fix(exc)) is not None:
            text += f"<br>{markup.escape(fix)}."
        return State("conflict" if seen.outcome is Outcome.CONFLICT else "error", text)
    p = seen.plan
    assert p is not None
    size = f" (about {format_size(p.estimate)})" if p.estimate else ""
    if p.replaces is not None:  # judged empty: it takes the copy as itself
        text = (f"<b>Into the existing empty dataset:</b> {markup.escape(destination)} "
                f"({markup.escape(p.replaces.why)}) takes a full copy of "
                f"@{markup.escape(s.snapshot.short)}{size} as itself.")
        return State("new", text, p)
    if p.kind == "full":
        extra = f", with {len(p.arrives)} snapshots" if len(p.arrives) > 1 else ""
        text = (f"<b>New dataset:</b> {markup.escape(destination)} will be created from a full "
                f"copy of @{markup.escape(s.snapshot.short)}{extra}{size}.")
        return State("new", text, p)
    text = (f"<b>Incremental from the common snapshot @{markup.escape(p.base or '')}:</b> "
            f"{len(p.arrives)} snapshot{'s' if len(p.arrives) != 1 else ''} to send "
            f"({markup.escape(_snapshots(p.arrives))}){size}.")
    return State("incremental", text, p)


# The refusals whose fix this page shows (in the wizard's words, gui/words.refusal_fix): the
# others name no choice the page offers.
SHOWN_FIXES = frozenset({PreflightReason.NO_PARENT, PreflightReason.MISSING_TOOL,
                         PreflightReason.ALREADY_THERE, PreflightReason.NO_SOURCE})


def refusal_fix(exc: PreflightError) -> str | None:
    """The fix of a refusal the page shows, in the wizard's words (the CLI's names flags)."""
    if exc.reason in SHOWN_FIXES or (exc.reason is PreflightReason.UNSUPPORTED
                                     and exc.figures.get("feature") == "raw"):
        return words.refusal_fix(exc)
    return None


def _unjudged(destination: str, text: str, found: ZmigrateError | None) -> State:
    """An existing dataset without snapshots not judged yet (or that could not be): no
    choice to replace it is offered."""
    if found is None:
        return State("conflict", text + f"<br>Reading what {markup.escape(destination)} "
                     "holds…")
    return State("conflict", text + "<br>What it holds could not be read: "
                 f"{markup.escape(found.message)}. Choose another name.")


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


def guess_tree_destination(session: Session) -> tuple[str, str]:
    """(parent, name) for a tree: where an earlier copy of its root is, else the first pool."""
    s = session
    assert s.tree is not None
    root = s.tree.root
    source = next((d for d in s.src_datasets or [] if d.name == root), None)
    guids = {x.guid for x in source.snapshots} if source else set()
    for ds in s.dst_datasets or []:
        if "/" in ds.name and guids & {x.guid for x in ds.snapshots}:
            parent, _, name = ds.name.rpartition("/")
            return parent, name
    pools = [d.name for d in s.dst_datasets or [] if "/" not in d.name]
    parent = pools[0] if pools else ""
    leaf = root.rsplit("/", 1)[-1]
    if s.same_host and f"{parent}/{leaf}" == root:
        leaf += "-copy"
    return parent, leaf


def layout(plan: TreePlan, examples: int = 3) -> str:
    """Where a few datasets land: `tank/t → newtank (into it, checked empty), tank/t/a →
    newtank/a, …`."""
    shown = [f"{e.source} → {e.destination}"
             + (" (into it: checked empty)" if e.into else "")
             for e in plan.entries[:examples]]
    more = len(plan.entries) - examples
    return "Layout: " + ", ".join(shown) + (f", and {more} more" if more > 0 else "")


def tree_state(plan: TreePlan) -> State:
    """The state line of a planned tree."""
    kinds = [e.action for e in plan.entries]
    full, inc, skip = kinds.count("full"), kinds.count("incremental"), kinds.count("skip")
    parts = [f"{n} {what}" for n, what in ((full, "in full, with their older snapshots"),
                                          (inc, "as a catch-up (only what changed)"),
                                          (skip, "already complete")) if n]
    text = (f"<b>{len(kinds)} dataset{'s' if len(kinds) != 1 else ''}</b>: "
            + ", ".join(parts) + ". ")
    text += markup.escape(plan.mount) + ". No mountpoint collision on the destination."
    text += "<br>" + markup.escape(layout(plan))
    if plan.vanished:
        text += (f"<br>{len(plan.vanished)} dataset(s) on the destination are no longer on the "
                 "source: " + markup.escape(", ".join(plan.vanished[:5]))
                 + " (kept, never destroyed).")
    return State("new" if not inc and not skip else "incremental", text)


def show_partial_choices(ui: Ui_DestinationPage, partial: Partial | None, fresh: bool) -> None:
    """The Resume / Discard radio buttons: shown for an interrupted receive, unchosen when
    `fresh` (Next waits for a choice); one whose plan is impossible is disabled."""
    ui.partial_note.setVisible(partial is not None)
    ui.partial_note.setText(partial.note if partial is not None else "")
    ui.discard_radio.setAccessibleDescription(partial.note if partial is not None else "")
    if fresh:
        ui.partial_group.setExclusive(False)
        ui.resume_radio.setChecked(False)
        ui.discard_radio.setChecked(False)
        ui.partial_group.setExclusive(True)
    for radio, text, plan in (
            (ui.resume_radio, partial.resume_text if partial else "",
             partial.resume_plan if partial else None),
            (ui.discard_radio, partial.discard_text if partial else "",
             partial.discard_plan if partial else None)):
        radio.setVisible(partial is not None)
        if partial is None:
            continue
        radio.setText(text)
        radio.setAccessibleName(text.replace("&", ""))
        radio.setEnabled(plan is not None)
        if plan is None and radio.isChecked():
            ui.partial_group.setExclusive(False)
            radio.setChecked(False)
            ui.partial_group.setExclusive(True)


class DestinationPage(Page):
    """The destination tree (datasets only), parent + name fields and the state line.

    When the destination holds an interrupted receive (OpenZFS resume token), the state line
    says how much of it is there, and Next waits for a choice: resume it or discard it. The
    token is decoded on the source host off the GUI thread.
    """

    STATE_BANNER = {"new": "ok", "incremental": "info", "conflict": "warn", "partial": "warn",
                    "error": "error"}

    def __init__(self, session: Session, settings: Settings,
                 parent: QWidget | None = None) -> None:
        super().__init__(session, settings, parent)
        self.ui = Ui_DestinationPage()
        forms.setup(self.ui, self)
        self.tree = DatasetTree(self.ui.dataset_tree, self.ui.filter_edit, self.ui.busy_bar,
                                self.ui.status_label, with_snapshots=False)
        _wire(self)
        self.state = State("error", "")
        self._loaded_for: object = None
        self._guessed_for: object = None
        # Interrupted receives read so far: (destination host, dataset, token) -> what was found.
        self.partials = PartialReader(self)
        self.emptiness = EmptinessReader(self)
        self._choice_for: tuple[int, str, str] | None = None
        # The tree's plan (engine.tree): read off the GUI thread whenever the choice changes.
        self.tree_plan: TreePlan | None = None
        self._tree_key: object = None
        # Typing a name re-plans the tree (two remote reads): wait for a pause in the typing.
        self._planner = LatestTask(self, TREE_PLAN_DELAY_MS)

    def initializePage(self) -> None:
        self.forget_complete()
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
        self.partials.clear()
        self.emptiness.clear()
        self._set_state(State("error", "Reading the destination's datasets…"))
        self.tree.load(s.dst_host, s.dst_caps, self._on_loaded)

    def _on_loaded(self, datasets: list[Dataset]) -> None:
        self.session.dst_datasets = datasets
        self._guessed_for = None
        self._apply_guess()

    def _apply_guess(self) -> None:
        s = self.session
        self.ui.mount_frame.setVisible(s.tree is not None)
        # The first choice says what really happens on this destination's zfs.
        no_u = s.dst_caps is not None and not s.dst_caps.receive_unmounted
        self.ui.unmounted_radio.setText(words.NO_UNMOUNTED if no_u else words.UNMOUNTED)
        if s.dst_datasets is None or (s.snapshot is None and s.tree is None):
            return
        picked = s.tree if s.tree is not None else s.snapshot
        if self._guessed_for is not picked:
            self._guessed_for = picked
            self._tree_key = None
            parent, name = guess_tree_destination(s) if s.tree else guess_destination(s)
            self.ui.force_check.setChecked(False)
            self.ui.into_check.setChecked(False)
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

    def _show_into(self) -> None:
        """"Into the pool itself" is a tree's choice when the parent is a pool's root."""
        parent = self.ui.parent_edit.text().strip().strip("/")
        offer = self.session.tree is not None and bool(parent) and "/" not in parent
        self.ui.into_check.setVisible(offer)
        if not offer:
            self.ui.into_check.setChecked(False)

    def _on_into(self, checked: bool) -> None:
        self.ui.name_edit.setEnabled(not checked)
        self._update_state()

    def destination(self) -> str:
        parent = self.ui.parent_edit.text().strip().strip("/")
        name = self.ui.name_edit.text().strip().strip("/")
        if self.ui.into_check.isChecked():
            return parent
        return f"{parent}/{name}" if parent and name else parent or name

    @property
    def checking_tree(self) -> bool:
        """True while the tree's plan is asked and not answered."""
        return self._planner.running

    @property
    def reading_partial(self) -> bool:
        """True while an interrupted receive's token is being decoded."""
        return bool(self.partials.reading)

    def _partial_key(self, destination: str) -> tuple[int, str, str] | None:
        token = partial_token(self.session, destination)
        return (id(self.session.dst_host), destination, token) if token else None

    def mount_root(self) -> str | None:
        text = self.ui.mount_root_edit.text().strip()
        return text if self.ui.mount_root_radio.isChecked() and text else None

    def _update_state(self) -> None:
        if self.tree.loading or self.session.dst_datasets is None:
            return
        if self.session.tree is not None:
            self._check_tree()
            return
        force = self.ui.force_check.isChecked()
        destination = self.destination()
        key = self._partial_key(destination)
        found = self.partials.found.get(key) if key else None
        if key is not None and found is None:
            self._read_partial(key)
        judged = self.emptiness.judged(self.session, destination, self._read_done)
        self.ui.busy_bar.setVisible(self.ui.busy_bar.isVisible() or bool(self.emptiness.reading))
        self._set_state(assess(self.session, destination, force, found, judged))

    def _read_done(self) -> None:
        if not self.partials.reading and not self.emptiness.reading and not self.tree.loading:
            self.ui.busy_bar.hide()
        self._update_state()

    def _read_partial(self, key: tuple[int, str, str]) -> None:
        """Decode the token off the GUI thread; the state line is assessed again after."""
        if self.partials.read(self.session, key, self._read_done):
            self.ui.busy_bar.show()

    def _check_tree(self) -> None:
        """Plan the tree with the engine (both inventories, collision check) off the GUI
        thread; the engine refuses collisions, and its error is the state line."""
        s = self.session
        destination = self.destination()
        if self.ui.mount_root_radio.isChecked() and not self.mount_root():
            self._tree_key = None
            self._set_tree_state(None, State("error", "Type the directory to mount it under."))
            return
        key = (destination, self.mount_root(), s.tree.excludes() if s.tree else (),
               id(s.tree))
        if key == self._tree_key:
            return
        self._tree_key = key
        try:
            check_dataset(destination)
            job = s.new_tree_job(destination)
            job.request = replace(job.request, mount_root=self.mount_root())
        except ZmigrateError as exc:
            self._set_tree_state(None, State("error", words.error_html(exc)))
            return
        self.ui.busy_bar.show()
        self._set_tree_state(None, State("error", "Planning the tree: both inventories, "
                                         "snapshots in common, mountpoint collisions…"))

        def ok(plan: TreePlan) -> None:
            self._tree_done()
            self._set_tree_state(plan, tree_state(plan))

        def failed(exc: Exception) -> None:
            self._tree_done()
            fix = words.refusal_fix(exc, mount_root=self.ui.mount_root_radio.isChecked()) \
                if isinstance(exc, PreflightError) else None  # this page's choices, not flags
            self._set_tree_state(None, State("error", words.error_html(exc, fix)))

        self._planner.submit(job.prepare, ok, failed)

    def _tree_done(self) -> None:
        if not self.partials.reading and not self.tree.loading:
            self.ui.busy_bar.hide()

    def _set_tree_state(self, plan: TreePlan | None, state: State) -> None:
        self.tree_plan = plan
        self._set_state(state)

    def _on_choice(self, checked: bool) -> None:
        if checked:
            self.complete_changed()

    def _set_state(self, state: State) -> None:
        self.state = state
        self.ui.state_label.setText(state.text)
        style.set_banner(self.ui.state_frame, self.STATE_BANNER[state.kind])
        check = self.ui.force_check
        check.setVisible(bool(state.force_text))
        if state.force_text:
            check.setText(check_box_text(state.force_text))
            check.setAccessibleName(state.force_text)
        elif check.isChecked():
            check.setChecked(False)
        self._show_choices(state.partial)
        self.complete_changed()

    def _show_choices(self, partial: Partial | None) -> None:
        """The Resume / Discard choice; a choice stays while the same partial is shown."""
        key = self._partial_key(self.destination()) if partial is not None else None
        fresh = key != self._choice_for
        self._choice_for = key
        show_partial_choices(self.ui, partial, fresh)

    def chosen_plan(self) -> Plan | None:
        """The plan the page's choices lead to (a placeholder transport and port)."""
        st = self.state
        if st.partial is not None:
            if self.ui.resume_radio.isChecked():
                return st.partial.resume_plan
            if self.ui.discard_radio.isChecked():
                return st.partial.discard_plan
            return None
        if st.force_text and not self.ui.force_check.isChecked():
            return None
        return st.plan

    def isComplete(self) -> bool:
        if self.session.tree is not None:
            return self.tree_plan is not None and not self.checking_tree
        return self.chosen_plan() is not None

    def validatePage(self) -> bool:
        s = self.session
        s.destination = self.destination()
        s.mount_root = self.mount_root() if s.tree is not None else None
        s.force = bool(self.state.force_text) and self.ui.force_check.isChecked()
        partial = self.state.partial is not None
        s.resume = partial and self.ui.resume_radio.isChecked()
        s.discard_partial = partial and self.ui.discard_radio.isChecked()
        return self.isComplete()

    def cleanupPage(self) -> None:
        self.tree.cancel()
        self._planner.cancel()
        self._tree_key = None


def _wire(page: DestinationPage) -> None:
    """The form's signals, and what is hidden until it applies."""
    ui = page.ui
    ui.dataset_tree.selectionModel().selectionChanged.connect(page._on_selection)
    ui.reload_button.clicked.connect(page._reload)
    for edit in (ui.parent_edit, ui.name_edit):
        edit.textChanged.connect(page._update_state)
    ui.force_check.toggled.connect(page._update_state)
    ui.into_check.toggled.connect(page._on_into)
    ui.parent_edit.textChanged.connect(page._show_into)
    for w in (ui.into_check, ui.force_check, ui.partial_note, ui.mount_frame):
        w.hide()
    style.set_role(ui.partial_note, "note")
    for radio in (ui.resume_radio, ui.discard_radio):
        radio.hide()
        radio.toggled.connect(page._on_choice)
    ui.mount_root_edit.setEnabled(False)
    ui.mount_root_radio.toggled.connect(ui.mount_root_edit.setEnabled)
    ui.mount_root_radio.toggled.connect(page._update_state)
    ui.mount_root_edit.editingFinished.connect(page._update_state)
