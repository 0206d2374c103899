"""A tree's copy placed as it arrives: its root's mountpoint set before any child comes
(where zfs could not as it received), held read-only under --mount-root."""

from __future__ import annotations

from ... import cmdline, zfs
from ...events import Observer, StageChanged
from ...hosts import Host


def root_mountpoint(dst_caps: zfs.Capabilities, mount_root: str | None) -> str | None:
    """Where this zfs could not receive unmounted (-u) or set the mountpoint (-o): the value to
    set on the copy's root before any child arrives, `none` (children inherit it and never
    mount, so no mountpoint directory modifies a parent) or the chosen root. None: nothing."""
    if mount_root is None and dst_caps.receive_unmounted:
        return None
    if mount_root is not None and dst_caps.receive_properties:
        return None
    return mount_root or "none"


def place_root(dst: Host, dst_caps: zfs.Capabilities, mount_root: str | None, destination: str,
               emit: Observer) -> None:
    """Set the copy's root mountpoint before any child arrives, where this zfs could not as
    it received (root_mountpoint says when and to what)."""
    value = root_mountpoint(dst_caps, mount_root)
    if value is None:
        return
    emit(StageChanged("verifying", f"setting mountpoint={value} on {destination}"))
    dst.execute(dst.privileged(["zfs", "set", f"mountpoint={value}", cmdline.dataset(destination)]),
                timeout=120).check(f"setting mountpoint={value}")


def hold_readonly(dst: Host, request_mount_root: str | None, readonly: bool, destination: str,
                  emit: Observer) -> None:
    """A copy mounted under --mount-root set readonly=on as soon as it arrives, before its
    children do: mounting and unmounting them in it writes to it (their mountpoint
    directories, access times), and the next catch-up's incremental would be refused as
    "destination modified" though nobody wrote there. readonly=on turns those writes away;
    the run's check sets it on the rest as before."""
    if request_mount_root is None or not readonly:
        return
    emit(StageChanged("verifying", f"setting readonly=on on {destination} as it arrived"))
    dst.execute(dst.privileged(["zfs", "set", "readonly=on", cmdline.dataset(destination)]),
                timeout=120).check("setting readonly=on")
