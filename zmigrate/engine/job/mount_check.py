"""A single dataset's `send -R` or `-p` received mounted: the stream carries the source's own
mountpoints (`/home`, say), and the copy would mount there on the destination, over what that
host already uses. Read with both hosts (`read_receive_mounts`: where the copy would mount and
how those paths are used), refused once the transfer is decided (`refuse_receive_mounts`),
naming the path and the ways out (the tree has its own check: tree/checks.py)."""

from __future__ import annotations

from dataclasses import dataclass

from .. import cmdline, zfs
from ..destination import mounts
from ..plan import Options, Site, Transfer, needs_unmounted


@dataclass(frozen=True, slots=True)
class ReceiveMounts:
    """Where each dataset of the copy would mount (destination name -> path), and how the
    paths in use are used there (destination name -> "where X is mounted", ...)."""

    paths: dict[str, str]
    clashes: dict[str, str]


def receives_mounted(t: Transfer, dst: Site) -> bool:
    """Whether this transfer's receive creates file systems that mount as they arrive."""
    return (t.kind == "full" and t.resume is None
            and t.options.mount and not needs_unmounted(dst))


def may_receive_mounted(options: Options, dst: Site, existing: zfs.Dataset | None) -> bool:
    """Before deciding: whether the transfer could be a `-R`/`-p` receive that mounts (a full
    one: into a new name or a dataset without snapshots), so where it mounts is read."""
    return ((options.replicate or options.send_properties) and options.mount
            and not needs_unmounted(dst) and (existing is None or not existing.snapshots))


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
    return ReceiveMounts(paths, mounts.paths_in_use(dst.host, paths, own=[destination]))


def refuse_receive_mounts(read: ReceiveMounts | None, t: Transfer, dst: Site) -> None:
    """Refuse a `-R`/`-p` receive that would mount a copy over a path the destination uses."""
    if read is None or not read.clashes or not receives_mounted(t, dst):
        return
    error = mounts.collision(dst.host.label, read.paths, read.clashes, "the copy",
                             _fix(dst.caps), "dataset")
    error.figures.update(unmounted="yes" if dst.caps.receive_unmounted else "",
                         properties="yes" if dst.caps.receive_properties else "")
    raise error


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
