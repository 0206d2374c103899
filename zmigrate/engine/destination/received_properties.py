"""After a receive: the properties it was to set are on the copy.

zfs receive leaves out a property it cannot set (a login without that property's `zfs allow`
permission; a value the pool cannot hold: compression=zstd into a `compatibility=grub2` pool),
says "cannot receive NAME property on DS: REASON" on stderr and exits 0 with the data in place
(verified on OpenZFS 2.3.2). The preflight refuses what it can foresee
(job/decide.refuse_missing_grants); this reads what happened to a single dataset's receive:
each `-o NAME=VALUE` must be set on the copy (its source local), each property a `-p`/`-R`
stream carried must be received there; zfs's own lines give the reason, and name what else it
left out. A tree's datasets are checked by value with the rest of the tree
(tree/running/verification.verify_tree).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .. import cmdline, zfs
from ..errors import TransferError
from ..events import LogLine
from ..hosts import Host
from ..hosts.at_once import both
from ..plain_words import first_few
from ..plan import Plan

# Searched, not matched: mbuffer's last status line has no line end, so zfs's words may follow
# it on the same line ("... buffer   6% full" then "cannot receive ...", seen on the guest).
REFUSED = re.compile(r"cannot receive (\S+) property on (\S+): (.+)$")
# Set as the receive's own choice, not a property the copy holds as set: a clone's origin.
NOT_READ_BACK = ("origin",)
# What a run sets on the copy itself (tree/running/verification.py leaves the same out of
# its comparison).
RUN_OWN = ("readonly", "mountpoint", "canmount", "sharenfs", "sharesmb")
# What a dataset holds back from its pool's free space (a thick volume's refreservation).
RESERVATIONS = ("refreservation", "reservation")
# A raw stream's encryption travels with the keys, not as received properties.
KEY_PROPERTIES = ("keylocation", "keyformat", "pbkdf2iters", "encryption")


@dataclass(frozen=True, slots=True)
class Unset:
    """A property the receive was to set on `dataset` and did not: `value` where it was given
    (-o), `reason` in zfs's words where it said one."""

    name: str
    dataset: str
    value: str | None
    reason: str

    def words(self) -> str:
        what = f"{self.name}={self.value}" if self.value is not None else self.name
        return f"{what} on {self.dataset}" + (f" ({self.reason})" if self.reason else "")


class RefusedLines:
    """Collects zfs receive's "cannot receive NAME property on DS: REASON" lines from a job's
    events (LogLine: the receive's stderr, whichever transport carries it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._said: dict[tuple[str, str], str] = {}

    def __call__(self, event: object) -> None:
        if not isinstance(event, LogLine):
            return
        m = REFUSED.search(event.text.strip())
        if m is not None:
            with self._lock:
                self._said[(m.group(1), m.group(2))] = m.group(3)

    def said(self) -> dict[tuple[str, str], str]:
        """(property, dataset) -> zfs's reason, so far."""
        with self._lock:
            return dict(self._said)


def unset_properties(src: Host, dst: Host, plan: Plan, said: Mapping[tuple[str, str], str],
                     src_sets: Sequence[zfs.Dataset]) -> list[Unset]:
    """What the receive of `plan` was to set and did not: the `-o` properties whose source on
    the copy is not local, the properties a `-p`/`-R` stream carried (set on the source, locally
    or received) whose source on the copy is not received, and what zfs `said` it left out;
    never one a `-x` leaves out (zfs says it for those too, where the login may not set them).
    `src_sets`: the source's datasets as read (a child without the snapshot is not sent)."""
    copy = plan.destination_dataset
    given = {n: v for n, v in plan.options.properties if n not in NOT_READ_BACK}
    left_out = set(plan.options.exclude_properties)
    out = _unset_given(dst, copy, given, said)
    if plan.replicate or plan.options.send_properties:
        out += _unset_carried(src, dst, plan, said, src_sets)
    named = {(u.name, u.dataset) for u in out}
    out += [Unset(n, ds, None, reason) for (n, ds), reason in said.items()
            if n not in left_out and (n, ds) not in named and cmdline.within(ds, copy)]
    return out


def _unset_given(dst: Host, copy: str, given: Mapping[str, str],
                 said: Mapping[tuple[str, str], str]) -> list[Unset]:
    """The `-o` properties not set on the copy (one `zfs get`)."""
    if not given:
        return []
    held = zfs.local_properties(dst, copy, ",".join(given), only=[copy]).get(copy, {})
    return [Unset(n, copy, v, said.get((n, copy), "")) for n, v in given.items()
            if n not in held]


def _unset_carried(src: Host, dst: Host, plan: Plan, said: Mapping[tuple[str, str], str],
                   src_sets: Sequence[zfs.Dataset]) -> list[Unset]:
    """The properties the stream carried that the copies did not receive (one read a host),
    but those the run decides itself (RUN_OWN, -o, -x) and the keys' (a raw stream's own)."""
    ds_name, short = plan.source_snapshot.split("@", 1)
    copy = plan.destination_dataset
    own = plan.options.receive_sets
    with_snapshot = {d.name for d in src_sets if d.snapshot(short) is not None}
    names = [ds_name, *(c for c in plan.children if c in with_snapshot)] \
        if plan.replicate else [ds_name]
    pairs = {n: copy + n[len(ds_name):] for n in names}
    sent, got = both(
        lambda: zfs.local_properties(src, ds_name, sources="local,received", only=names),
        lambda: zfs.local_properties(dst, copy, sources="received", only=list(pairs.values())))
    return [Unset(p, pairs[n], None, said.get((p, pairs[n]), ""))
            for n in names for p in sent.get(n, {})
            if p not in own and p not in RUN_OWN and p not in KEY_PROPERTIES
            and p not in got.get(pairs[n], {})]


def reserved_fix(refused: Mapping[tuple[str, str], str]) -> str | None:
    """The fix where zfs receive left out a reservation the pool has no room for (`refused`:
    (property, dataset) -> zfs's reason): volumes made thick, as Proxmox and TrueNAS make them,
    reserve their whole size; else None."""
    names = sorted({n for (n, _), why in refused.items()
                    if n in RESERVATIONS and "greater than available space" in why})
    if not names:
        return None
    return (f"the destination pool has less free space than these datasets reserve: leave "
            f"the reservation out ({' '.join('-x ' + n for n in names)}: volumes then arrive "
            "thin, and it can be set there later) or make room on that pool; the data arrived "
            "and is kept")


def check_received_properties(src: Host, dst: Host, plan: Plan,
                              said: Mapping[tuple[str, str], str],
                              src_sets: Sequence[zfs.Dataset]) -> None:
    """Fail the job, keeping the copy, where the receive left out a property it was to set."""
    unset = unset_properties(src, dst, plan, said, src_sets)
    if not unset:
        return
    sets = [f"zfs set {cmdline.join([f'{u.name}={u.value}', u.dataset])}" for u in unset
            if u.value is not None]
    carried = [u for u in unset if u.value is None]
    fix = ("the copy is kept as it arrived; once the cause is mended (a login set up with "
           "`zfs allow` needs each property's permission; a pool, the feature a value needs), "
           "set " + ("them" if len(unset) > 1 else "it") + " there"
           + (": " + "; ".join(sets) if sets else "")
           + (f"; {'each' if len(carried) > 1 else 'the'} carried one to the source's value "
              f"(zfs get -s local,received {carried[0].name} on the source)" if carried else ""))
    fix = reserved_fix({(u.name, u.dataset): u.reason for u in unset}) or fix
    raise TransferError(
        f"{plan.destination_snapshot} arrived (guid equal), but zfs receive did not set "
        + first_few([u.words() for u in unset]),
        host=dst.label, fix=fix, figures={"properties": ",".join(u.name for u in unset)})


__all__ = ["RefusedLines", "Unset", "check_received_properties", "reserved_fix",
           "unset_properties"]
