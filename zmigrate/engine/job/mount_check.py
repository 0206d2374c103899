"""A single dataset's `send -R` or `-p` received mounted: the stream carries the source's own
mountpoints (`/home`, say), and the copy would mount there on the destination, over what that
host already uses. Refused before anything runs, naming the path and the ways out (the tree
has its own check: tree/checks.py)."""

from __future__ import annotations

from collections.abc import Sequence

from .. import cmdline, zfs
from ..destination import mounts
from ..hosts import Host
from ..plan import Plan, Site, needs_unmounted


def receives_mounted(plan: Plan, dst: Site) -> bool:
    """Whether this plan's receive creates file systems that mount as they arrive."""
    options = plan.options
    return (plan.kind == "full" and plan.resume_token is None
            and options.mount and not needs_unmounted(dst))


def check_receive_mounts(src: Host, dst: Site, plan: Plan, ds_name: str,
                         src_sets: Sequence[zfs.Dataset], *, tree: bool = False) -> None:
    """Refuse a `-R`/`-p` receive that would mount a copy over a path the destination uses
    (`tree`: a tree's dataset job, whose tree checked every dataset at once already)."""
    options = plan.options
    if tree or not (options.replicate or options.send_properties) \
            or not receives_mounted(plan, dst):
        return
    if any(d.type != "filesystem" for d in src_sets if d.name == ds_name):
        return
    destination = plan.destination_dataset
    pairs = [(ds_name, destination)]
    if options.replicate:
        pairs += [(d.name, destination + d.name[len(ds_name):]) for d in src_sets
                  if cmdline.below(d.name, ds_name) and d.type == "filesystem"]
    local = {name: props["mountpoint"] for name, props in
             zfs.local_properties(src, ds_name, "mountpoint").items() if "mountpoint" in props}
    if not options.replicate:
        local = {k: v for k, v in local.items() if k == ds_name}
    chosen = dict(options.properties).get("mountpoint")
    if chosen is not None:
        local[ds_name] = chosen
    elif "mountpoint" in options.exclude_properties:
        local.pop(ds_name, None)
    paths = mounts.received_paths(pairs, local, destination,
                                  mounts.parent_mountpoint(dst.host, destination))
    clashes = mounts.paths_in_use(dst.host, paths, own=[destination])
    if clashes:
        raise mounts.collision(dst.host.label, paths, clashes, "the copy", _fix(dst.caps))


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
