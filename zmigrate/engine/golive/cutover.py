"""Go live: bring a verified copy into service after a final sync, and go back.

After `send -r --final` the copy is read-only and unmounted (or under a temporary root). Going
live makes it what the source was: `readonly`, `mountpoint` and `canmount` as on the source
(or under a root the user chooses), mounted parents first, shared as the source was. When the
old pool and the new one sit on one host, the source's datasets are unmounted first and set
`canmount=noauto` (nothing destroyed, still read-only), so the same paths show the new pool.

The plan is data (every command, with the one that undoes it), computed from one property
read per host, so a face shows it before anything runs. `run` applies it in order; a step that
fails (a busy mountpoint) undoes what was done and stops. The plan and each step are kept in
the history as they run (`golive/journal.py`), and going back undoes exactly what ran.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from .. import cmdline, losses
from ..errors import InvalidNameError, ZmigrateError
from ..hosts import Host
from ..losses import Loss

PROPS = ("readonly", "mountpoint", "canmount", "mounted", "sharenfs", "sharesmb")
SHARES = ("sharenfs", "sharesmb")
SNAPSHOT_PROPS = ("guid", "createtxg")


@dataclass(frozen=True, slots=True)
class Prop:
    value: str
    source: str  # "local", "received", "default", "inherited from X", "-"


Props = dict[str, dict[str, Prop]]  # dataset -> property -> value and source


@dataclass(frozen=True, slots=True)
class Step:
    """One command on one side, what it does, and the command that undoes it."""

    side: str  # "source" or "destination"
    what: str
    argv: tuple[str, ...]
    undo: tuple[str, ...] | None = None
    # Its end state may come by itself (setting a mountpoint mounts): this error is success.
    already: str | None = None
    path: str | None = None  # the mountpoint an unmount frees (checked for processes first)

    def to_json(self) -> dict[str, object]:
        return {"side": self.side, "what": self.what, "command": cmdline.join(self.argv),
                "undo": cmdline.join(self.undo) if self.undo else None}


@dataclass(frozen=True, slots=True)
class GoLivePlan:
    """Every step of going live, in order, and what the user must do besides."""

    source_root: str
    destination_root: str
    same_host: bool
    steps: tuple[Step, ...]
    notes: tuple[str, ...] = field(default=())  # e.g. the `zfs load-key` to run
    # A go-live cut off earlier, continued: its record (the history's row) and how many of
    # its steps are done; the rest run now.
    record: int | None = None
    done: int = 0

    @property
    def remaining(self) -> tuple[Step, ...]:
        """The steps still to run."""
        return self.steps[self.done:]

    @property
    def destroys(self) -> tuple[Loss, ...]:
        """What the steps still to run hide, by name (nothing is destroyed): the datasets
        they unmount."""
        return tuple(losses.going_live(self.remaining))

    def to_json(self) -> dict[str, object]:
        return {"event": "go_live_plan", "source": self.source_root,
                "destination": self.destination_root, "same_host": self.same_host,
                "steps": [s.to_json() for s in self.remaining], "notes": list(self.notes),
                "continues": self.record, "done": self.done,
                "destroys": [x.to_json() for x in self.destroys]}


def read_props(host: Host, root: str, extra: tuple[str, ...] = ()) -> Props:
    """The properties going live needs, of `root`, its descendants and their snapshots (their
    guid, createtxg and, where the host has it, written): one `zfs get -r`."""
    names = PROPS + SNAPSHOT_PROPS + extra
    # No `-t filesystem`: zfs-fuse's get has no -t; the snapshots are wanted anyway.
    r = host.execute(host.privileged(["zfs", "get", "-Hp", "-r", "-o",
                                      "name,property,value,source", ",".join(names),
                                      cmdline.dataset(root)]), timeout=120)
    r.check(f"reading the properties of {root}")
    return parse_props(r.stdout)


def parse_props(text: str) -> Props:
    """`zfs get -H -o name,property,value,source` output as Props (datasets and snapshots)."""
    out: Props = {}
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) == 4:
            out.setdefault(parts[0], {})[parts[1]] = Prop(parts[2], parts[3])
    return out


def datasets(props: Props) -> Props:
    """Only the datasets of `props` (not their snapshots)."""
    return {name: p for name, p in props.items() if "@" not in name}


def _set(ds: str, prop: str, value: str) -> tuple[str, ...]:
    return ("zfs", "set", f"{prop}={value}", cmdline.dataset(ds))


def _restore(ds: str, prop: str, before: Prop) -> tuple[str, ...]:
    """The command that puts `prop` back as it was: set it, or inherit it again (canmount is
    never inherited: set to its value)."""
    if before.source in ("local", "received") or prop == "canmount":
        return _set(ds, prop, before.value)
    return ("zfs", "inherit", prop, cmdline.dataset(ds))


def plan_go_live(src: Props, dst: Props, source_root: str, destination_root: str, *,
                 same_host: bool, mount_root: str | None = None,
                 readonly_before: dict[str, str] | None = None) -> GoLivePlan:
    """The steps that make the copy the live data. `readonly_before`: the source's local
    readonly before its first final sync set it (from the history; not local where it does
    not say): the copy's, and the source's again after going back. None: unknown (the copy
    readonly=off, the source left read-only)."""
    if mount_root is not None and (not posixpath.isabs(mount_root) or
                                   any(c in mount_root for c in "\n\0")):
        raise InvalidNameError(f"the mount root {mount_root!r} is not an absolute path",
                               fix="name a folder from /, e.g. /mnt/new")
    src, dst = datasets(src), datasets(dst)
    steps: list[Step] = []
    notes: list[str] = []
    pairs = [(s, destination_root + s[len(source_root):]) for s in sorted(src)
             if destination_root + s[len(source_root):] in dst]
    if readonly_before is not None:
        steps += _source_stays_readonly([s for s, _ in pairs], readonly_before)
    if same_host:
        steps += _source_out_of_the_way(src)
    if same_host:
        copied = {s for s, _ in pairs}
        notes += [f"{name} was not copied: it is unmounted with the rest of the source and "
                  "nothing takes its place (going back mounts it again)"
                  for name in sorted(src) if name not in copied
                  and src[name]["mounted"].value == "yes"]
    for s_name, d_name in pairs:
        steps += _copy_like_source(src[s_name], dst[d_name], s_name, d_name, source_root,
                                   destination_root, mount_root, readonly_before or {})
    if readonly_before is None and pairs:
        notes.append("the history does not say how read-only the source was before the final "
                     "sync: it stays read-only after going back")
    for s_name, d_name in pairs:
        props = dst[d_name]
        if props.get("keystatus", Prop("-", "-")).value == "unavailable":
            notes.append(f"{d_name} is encrypted and its key is not loaded: run "
                         f"`zfs load-key {d_name}`, then `zfs mount {d_name}`")
            continue
        if _will_mount(src[s_name], props) and props["mounted"].value != "yes":
            steps.append(Step("destination", f"mount {d_name}",
                              ("zfs", "mount", cmdline.dataset(d_name)),
                              ("zfs", "unmount", cmdline.dataset(d_name)),
                              already="already mounted"))
    return GoLivePlan(source_root, destination_root, same_host, tuple(steps), tuple(notes))


def _source_stays_readonly(names: list[str], before: dict[str, str]) -> list[Step]:
    """The source stays read-only while the copy is live (the final sync set it); first, so
    that going back puts its readonly back as before that sync last (set, or inherited)."""
    out = []
    for name in names:
        ds = cmdline.dataset(name)
        undo = (_set(name, "readonly", before[name]) if name in before
                else ("zfs", "inherit", "readonly", ds))
        out.append(Step("source", f"readonly=on kept on {name} (going back restores it)",
                        _set(name, "readonly", "on"), undo))
    return out


def _source_out_of_the_way(src: Props) -> list[Step]:
    """Old and new pool on one host: the source's datasets unmounted (children first) and set
    canmount=noauto, so their paths are free for the copy; nothing is destroyed."""
    steps: list[Step] = []
    for name in sorted(src, reverse=True):
        props = src[name]
        if props["mounted"].value == "yes":
            ds = cmdline.dataset(name)
            steps.append(Step("source", f"unmount {name}", ("zfs", "unmount", ds),
                              ("zfs", "mount", ds), already="not currently mounted",
                              path=props["mountpoint"].value))
    for name in sorted(src):
        canmount = src[name]["canmount"]
        if canmount.value == "on":
            steps.append(Step("source", f"canmount=noauto on {name}",
                              _set(name, "canmount", "noauto"),
                              _restore(name, "canmount", canmount)))
    return steps


def _copy_like_source(s: dict[str, Prop], d: dict[str, Prop], s_name: str, d_name: str,
                      source_root: str, destination_root: str, mount_root: str | None,
                      readonly_before: dict[str, str]) -> list[Step]:
    """readonly, mountpoint, canmount and shares of one copy set as on its source."""
    steps: list[Step] = []
    want_ro = readonly_before.get(s_name, "off")
    if d["readonly"].value != want_ro:
        steps.append(Step("destination", f"readonly={want_ro} on {d_name}",
                          _set(d_name, "readonly", want_ro), _restore(d_name, "readonly",
                                                                      d["readonly"])))
    mountpoint = _wanted_mountpoint(s, s_name, source_root, mount_root, d_name == destination_root)
    if mountpoint is not None and d["mountpoint"].value != mountpoint:
        steps.append(Step("destination", f"mountpoint={mountpoint} on {d_name}",
                          _set(d_name, "mountpoint", mountpoint),
                          _restore(d_name, "mountpoint", d["mountpoint"])))
    elif mountpoint is None and d["mountpoint"].source in ("local", "received") \
            and not s["mountpoint"].source.startswith(("local", "received")):
        # Inherited on the source: inherited on the copy too (from its new root).
        steps.append(Step("destination", f"mountpoint inherited on {d_name}",
                          ("zfs", "inherit", "mountpoint", cmdline.dataset(d_name)),
                          _restore(d_name, "mountpoint", d["mountpoint"])))
    if d["canmount"].value != s["canmount"].value:
        steps.append(Step("destination", f"canmount={s['canmount'].value} on {d_name}",
                          _set(d_name, "canmount", s["canmount"].value),
                          _restore(d_name, "canmount", d["canmount"])))
    for share in SHARES:
        have, want = d.get(share), s.get(share)
        # Set on the source, or reaching its root from above the tree: the copy has no such
        # parent. (The tree's receive left them out: shared only now.)
        own = want is not None and (want.source in ("local", "received")
                                    or d_name == destination_root)
        if own and want is not None and have is not None and have.value != want.value:
            steps.append(Step("destination", f"{share}={want.value} on {d_name}",
                              _set(d_name, share, want.value), _restore(d_name, share, have)))
    return steps


def _wanted_mountpoint(s: dict[str, Prop], s_name: str, source_root: str,
                       mount_root: str | None, is_root: bool) -> str | None:
    """The copy's mountpoint: the source's own where it set one, the source root's (or the
    chosen root) on the copy's root; None where it is inherited."""
    mp = s["mountpoint"]
    if is_root:
        if mount_root is not None:
            return mount_root
        return mp.value
    if mp.source in ("local", "received"):
        if mount_root is not None and mp.value.startswith("/"):
            return posixpath.join(mount_root, posixpath.relpath(s_name, source_root))
        return mp.value
    return None


def _will_mount(s: dict[str, Prop], d: dict[str, Prop]) -> bool:
    return s["canmount"].value == "on" and s["mountpoint"].value not in ("none", "legacy")


class GoLiveError(ZmigrateError):
    """Going live or back could not be done (a step failed, the copy is not ready)."""
