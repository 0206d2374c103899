"""The write test's temporary dataset: which one this run created (the guid its `zfs create`
gave it), and its destroy, which touches only that one; and the ones earlier runs left behind
(a run killed, or its session lost, before its clean-up), found by name, age and guid."""

from __future__ import annotations

import re
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from .. import cmdline, zfs
from ..errors import ZmigrateError
from ..hosts import Host

TEMP_PREFIX = "zmigrate-doctor-"
_RUN_NAME = re.compile(re.escape(TEMP_PREFIX) + "[0-9a-f]{8}")  # the prefix and a run id
# No doctor run lasts an hour: an older write-test dataset is no run's going on now (another
# computer's doctor may be writing a younger one).
STALE_AFTER = 3600.0
NOT_OURS = "zmigrate-not-ours"  # said where the write test's name holds another dataset
# What `zfs create` says (OpenZFS, zfs-fuse) when the dataset exists but its mount failed:
# "filesystem successfully created, but not mounted" / "... but it may only be mounted by root".
CREATED_UNMOUNTED = "successfully created"
MOUNT_TRIES = 3


def create(dst: Host, ds: str, quota: int) -> tuple[str, str | None]:
    """Create this run's `ds` with `quota`: its guid, and why it is not mounted (None once it
    is). A create whose mount failed still made the dataset: its guid is read all the same
    (so the run destroys it), and the mount is tried again (what stood in its way may pass)."""
    r = dst.execute(dst.privileged(["zfs", "create", "-o", f"quota={quota}", ds]),
                    timeout=120)
    if not r.ok and CREATED_UNMOUNTED not in r.stderr:
        r.check(f"creating {ds}")
    guid = created_guid(dst, ds)
    if r.ok:
        return guid, None
    why = r.stderr.strip().splitlines()[-1]
    for attempt in range(MOUNT_TRIES):
        if attempt:
            time.sleep(1.0)
        m = dst.execute(dst.privileged(["zfs", "mount", ds]), timeout=60)
        if m.ok:
            return guid, None
        why = (m.stderr.strip().splitlines() or [why])[-1]
    return guid, f"{ds} was created but could not be mounted: {why}"


def created_guid(dst: Host, ds: str) -> str:
    """The guid of `ds`, just created by this run ("" where it cannot be read: its random
    name alone then says it is ours)."""
    try:
        return str(zfs.guid(dst, ds))
    except (ZmigrateError, ValueError):
        return ""


def destroy_line(dst: Host, ds: str, guid: str, force: list[str]) -> str:
    """`zfs destroy -r` of `ds` only if it still has `guid`, read in the same command; else
    NOT_OURS is said (a failure to read it is a failure, retried)."""
    destroy = cmdline.join(dst.privileged(["zfs", "destroy", "-r", *force, ds]))
    if not guid:
        return destroy
    get = cmdline.join(dst.privileged(["zfs", "get", "-Hp", "-o", "value", "guid", ds]))
    return (f'g=$({get}); if [ "$g" = {cmdline.join([guid])} ]; then {destroy}; '
            f'elif [ -n "$g" ]; then echo {NOT_OURS}; else false; fi')


def destroy(dst: Host, ds: str, guid: str, wait: float) -> bool:
    """Destroy this run's `ds`, retrying for `wait` seconds while it is busy, forcing the
    unmount (`destroy -f`: it is the doctor's own dataset) after the first refusal. True once
    gone, or once another dataset holds the name (never ours to destroy)."""
    deadline = time.monotonic() + wait
    force: list[str] = []
    while True:
        try:
            if not zfs.exists(dst, ds):
                return True
            if NOT_OURS in dst.run(destroy_line(dst, ds, guid, force), timeout=120).stdout:
                return True
        except ZmigrateError:
            pass
        force = ["-f"]  # refused or not yet gone: force the unmount from now on
        if time.monotonic() > deadline:
            return False
        time.sleep(0.3)


@dataclass(frozen=True, slots=True)
class Leftover:
    """An earlier run's write-test dataset, still on the destination."""

    name: str
    guid: str
    created: int  # epoch seconds
    used: int  # bytes


def leftovers(dst: Host, parent: str, now: float) -> list[Leftover]:
    """The write-test datasets directly under `parent` that earlier runs left, older than
    STALE_AFTER (none where they cannot be read)."""
    r = dst.execute(dst.privileged(["zfs", "list", "-H", "-t", "filesystem", "-o", "name",
                                    "-r", parent]), timeout=120)
    names = [n for n in r.stdout.split() if n.rpartition("/")[0] == parent
             and _RUN_NAME.fullmatch(n.rpartition("/")[2])] if r.ok else []
    if not names:
        return []
    g = dst.execute(dst.privileged(["zfs", "get", "-H", "-p", "-o", "name,property,value",
                                    "guid,creation,used", *names]), timeout=120)
    props: dict[str, dict[str, str]] = {}
    for line in g.stdout.splitlines():
        name, _, rest = line.partition("\t")
        prop, _, value = rest.partition("\t")
        props.setdefault(name, {})[prop] = value.strip()
    found = []
    for n in names:
        p = props.get(n, {})
        if all(p.get(k, "").isdigit() for k in ("guid", "creation", "used")) \
                and now - int(p["creation"]) >= STALE_AFTER:
            found.append(Leftover(n, p["guid"], int(p["creation"]), int(p["used"])))
    return found


def clear(dst: Host, found: Sequence[Leftover], named: Collection[str],
          wait: float) -> list[Leftover]:
    """Destroy the leftovers the user was shown by name (`named`), each only while it still
    has the guid read when it was found; the ones still there after."""
    return [lo for lo in found if lo.name not in named or not destroy(dst, lo.name, lo.guid, wait)]
