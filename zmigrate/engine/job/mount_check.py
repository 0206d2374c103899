"""A single dataset's `send -R` or `-p` received mounted: the stream carries the source's own
mountpoints (`/home`, say), and the copy would mount there on the destination, over what that
host already uses. Read with both hosts (`read_receive_mounts`: where the copy would mount and
how those paths are used), refused once the transfer is decided (`refuse_receive_mounts`),
naming the path and the ways out (the tree has its own check: tree/preflight/placement.py). A plain
receive of a new dataset mounts where its parent says (`read_covered`): over a folder holding
files only with --force, the folder then on the plan's list as hidden."""

from __future__ import annotations

from dataclasses import dataclass, replace

from .. import cmdline, losses, zfs
from ..destination import mounts
from ..losses import DESTINATION, Loss, LossKind
from ..plan import Options, Site, Transfer, needs_unmounted


@dataclass(frozen=True, slots=True)
class ReceiveMounts:
    """Where each dataset of the copy would mount (destination name -> path), and how the
    paths in use are used there (destination name -> "where X is mounted", ...)."""

    paths: dict[str, str]
    clashes: dict[str, str]
    plain: bool = False  # a plain receive's folder (`read_covered`): --force may hide it


def receives_mounted(t: Transfer, dst: Site) -> bool:
    """Whether this transfer's receive creates file systems that mount as they arrive: a full
    one, or an incremental `-R` (the children new on the source since the last copy)."""
    return ((t.kind == "full" or t.options.replicate) and t.resume is None
            and t.options.mount and not needs_unmounted(dst))


def may_receive_mounted(options: Options, dst: Site, existing: zfs.Dataset | None) -> bool:
    """Before deciding: whether the transfer could be a `-R`/`-p` receive that mounts (a full
    one: into a new name or a dataset without snapshots; or any `-R`, whose incremental
    creates the source's new children), so where it mounts is read."""
    return ((options.replicate or options.send_properties) and options.mount
            and not needs_unmounted(dst)
            and (existing is None or not existing.snapshots or options.replicate))


def read_receive_mounts(src: Site, dst: Site, ds_name: str, destination: str,
                        options: Options) -> ReceiveMounts | None:
    """Where a `-R`/`-p` receive of `ds_name` into `destination` would mount each dataset, and
    which of those paths the destination uses (None: not a file system, nothing to read)."""
    src_sets = src.datasets
    if any(d.type != "filesystem" for d in src_sets if d.name == ds_name):
        return None
    pairs = [(ds_name, destination)]
    if options.replicate:
        pairs += [(d.name, destination + d.name[len(ds_name):]) for d in src_sets
                  if cmdline.below(d.name, ds_name) and d.type == "filesystem"]
    local = {name: props["mountpoint"] for name, props in
             zfs.local_properties(src.host, ds_name, "mountpoint").items()
             if "mountpoint" in props}
    if not options.replicate:
        local = {k: v for k, v in local.items() if k == ds_name}
    chosen = dict(options.properties).get("mountpoint")
    if chosen is not None:
        local[ds_name] = chosen
    elif "mountpoint" in options.exclude_properties:
        local.pop(ds_name, None)
    paths = mounts.received_paths(pairs, local, destination,
                                  mounts.parent_mountpoint(dst.host, destination))
    # Where the copy is there already (an incremental -R), only the datasets new on the
    # destination arrive and mount: the others stay where they are mounted.
    there = {d.name for d in dst.datasets}
    paths = {d: p for d, p in paths.items() if d not in there}
    return ReceiveMounts(paths, mounts.paths_in_use(dst.host, paths, own=[destination]))


def may_cover(options: Options, dst: Site, existing: zfs.Dataset | None) -> bool:
    """Before deciding: whether the transfer could be a plain receive of a new dataset that
    mounts (under its parent's mountpoint), so the folder it would mount on is read."""
    return (not (options.replicate or options.send_properties) and options.mount
            and not needs_unmounted(dst) and existing is None)


def read_covered(dst: Site, destination: str, options: Options) -> ReceiveMounts | None:
    """The folder a plain receive of the new dataset `destination` would mount on, if it
    holds files or cannot be listed (mounts.covered_folder: one command); None when it is
    free."""
    covered = mounts.covered_folder(dst.host, destination,
                                    dict(options.properties).get("mountpoint"))
    if covered is None:
        return None
    path, how = covered
    return ReceiveMounts({destination: path}, {destination: how}, plain=True)


def refuse_receive_mounts(read: ReceiveMounts | None, t: Transfer, dst: Site) -> Transfer:
    """Refuse a `-R`/`-p` receive that would mount a copy over a path the destination uses;
    a plain one over a folder holding files too, unless --force: then that folder is on the
    transfer's list as hidden (OpenZFS on FreeBSD, and on Linux with overlay=on, mounts over
    it). Returns the transfer (with it)."""
    if read is None or not read.clashes or not receives_mounted(t, dst):
        return t
    if read.plain and t.options.force:
        hidden = [Loss(DESTINATION, LossKind.HIDDEN, read.paths[ds],
                       f"hidden while {ds} is mounted over it (--force)") for ds in read.clashes]
        return replace(t, destroys=losses.unique((*t.destroys, *hidden)))
    fix = _fix(dst.caps) + ("; or pass --force to mount it there anyway (the folder's files "
                            "stay, hidden while the copy is mounted)" if read.plain else "")
    raise mounts.collision(dst.host.label, read.paths, read.clashes, "the copy", fix,
                           "dataset", unmounted="yes" if dst.caps.receive_unmounted else "",
                           properties="yes" if dst.caps.receive_properties else "")


def _fix(caps: zfs.Capabilities) -> str:
    ways = []
    if caps.receive_unmounted:
        ways.append("receive it unmounted with --no-mount (zfs receive -u) and mount it "
                    "where you choose later")
    if caps.receive_properties:
        ways.append("give it a free mountpoint as it arrives with --property "
                    "mountpoint=/a/free/path (or mountpoint=none)")
    ways.append("pick a destination whose copy mounts on a free path")
    return "; or ".join(ways)
