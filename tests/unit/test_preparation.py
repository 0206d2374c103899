"""A job's preparation: read, decide, plan. The decide and plan steps work on what the read
step read: given a `Reading`, they ask neither host anything (a host here fails the test if
asked), and they decide as `make_plan` does."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from tests.unit.test_plan import CAPS, SRC_SNAPS, dataset, snap
from zmigrate.engine import zfs
from zmigrate.engine.errors import PreflightError, PreflightReason
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.job import Known, Request
from zmigrate.engine.job.decide import decide_job, refuse_missing_grants
from zmigrate.engine.job.mount_check import ReceiveMounts
from zmigrate.engine.job.planning import on_port, plan_job
from zmigrate.engine.job.preflight import Reading
from zmigrate.engine.plan import Options, Site, make_plan

CAPS_NO_ESTIMATE = dataclasses.replace(CAPS, send_estimate=False)


class Unasked(LocalHost):
    """A host that must not be asked anything (the decide and plan steps read nothing)."""

    def run(self, line: str, *, timeout: float = 120.0, **_: Any) -> Any:
        raise AssertionError(f"{self.label} was read after the read step: {line}")


def reading(dst_snaps: list[zfs.Snapshot] | None = None, **fields: Any) -> Reading:
    src = Site(Unasked("src"), CAPS_NO_ESTIMATE, [dataset("tank/home", SRC_SNAPS)])
    dst_sets = [dataset("backup")] + ([dataset("backup/home", dst_snaps)]
                                      if dst_snaps is not None else [])
    dst = Site(Unasked("dst"), CAPS_NO_ESTIMATE, dst_sets)
    known = Known(tuple(src.datasets), tuple(dst_sets), frozenset({40001}),
                  ("192.0.2.7", "192.0.2.5"))
    existing = next((d for d in dst_sets if d.name == "backup/home"), None)
    return Reading(src, dst, known, existing, **fields)


@pytest.mark.parametrize("dst_snaps", [None, [snap("backup/home", "b", 12, 20)]])
def test_decide_and_plan_read_nothing_and_plan_as_make_plan_does(
        dst_snaps: list[zfs.Snapshot] | None) -> None:
    read = reading(dst_snaps)
    request = Request("tank/home@d", "backup/home", Options(port=40002))
    decision = decide_job(read.src.host, read.dst.host, request, read)
    plan = plan_job(read, decision)
    same = make_plan(read.src, read.dst, "tank/home@d", "backup/home", decision.options,
                     connect_address="192.0.2.7", allow_address="192.0.2.5", port=40002)
    assert plan.kind == same.kind == ("full" if dst_snaps is None else "incremental")
    assert [(s.source_command, s.destination_command) for s in plan.steps] == \
        [(s.source_command, s.destination_command) for s in same.steps]
    assert plan.port == 40002 and plan.warnings == same.warnings
    moved = on_port(read, decision, plan, 40003)  # another port: written again, not re-read
    assert moved.port == 40003 and "40003" in (moved.steps[0].destination_command or "")


def test_a_port_the_read_step_saw_in_use_is_refused_without_asking_again() -> None:
    read = reading()
    with pytest.raises(PreflightError) as info:
        decide_job(read.src.host, read.dst.host,
                   Request("tank/home@d", "backup/home", Options(port=40001)), read)
    assert info.value.reason is PreflightReason.NO_PORT
    assert info.value.figures == {"port": "40001"}


def test_missing_delegations_are_decided_on_the_grants_read() -> None:
    grants = zfs.Grants("zm", {"tank/home": "", "backup": ""}, ())
    read = reading(grants=(grants, grants))
    with pytest.raises(PreflightError) as info:
        decide_job(read.src.host, read.dst.host, Request("tank/home@d", "backup/home"), read)
    err = info.value
    assert err.reason is PreflightReason.PERMISSION and err.figures["dataset"] == "tank/home"
    assert err.figures["allow"].startswith("zfs allow -u zm ") and "send" in err.figures["missing"]


def _allowed(dataset: str, perms: str) -> str:
    """`zfs allow DATASET` as OpenZFS 2.3 prints it, for user zm."""
    return (f"---- Permissions on {dataset} ------------------------------------------\n"
            f"Local+Descendent permissions:\n\tuser zm {perms}\n")


def test_properties_the_receive_sets_need_their_own_delegation() -> None:
    """Without a property's permission OpenZFS receives the data, exits 0 and leaves the
    property out: each `-o` and each property the `-p` stream carries is counted (user
    properties as `userprop`); `-x` and a clone's `origin` need nothing, and a `-x` of what
    the stream does not carry is left out where the login may not set it."""
    src = zfs.Grants("zm", {"tank/home": _allowed("tank/home", "hold,send")})
    dst = zfs.Grants("zm", {"backup": _allowed("backup", "create,mount,readonly,receive")})
    options = Options(port=40002, send_properties=True,
                      properties=(("compression", "lz4"), ("user:tag", "x")),
                      exclude_properties=("atime", "sharenfs"))
    read = reading(grants=(src, dst), carried=frozenset({"atime", "recordsize", "user:note"}))
    openzfs = dataclasses.replace(read.dst.caps, receive_properties=True)  # -o and -x
    read = dataclasses.replace(read, dst=dataclasses.replace(read.dst, caps=openzfs))
    with pytest.raises(PreflightError) as info:
        decide_job(read.src.host, read.dst.host, Request("tank/home@d", "backup/home", options),
                   read)
    assert info.value.figures["missing"] == "compression,userprop,recordsize"
    assert info.value.figures["allow"] == \
        "zfs allow -u zm compression,userprop,recordsize backup"
    granted = _allowed("backup", "compression,create,mount,readonly,receive,recordsize,userprop")
    read = dataclasses.replace(read, grants=(src, zfs.Grants("zm", {"backup": granted})))
    decision = decide_job(read.src.host, read.dst.host,
                          Request("tank/home@d", "backup/home", options), read)
    # `-x sharenfs` is left out: the stream carries none and the login may not set it (zfs
    # would only say "cannot receive sharenfs property"); `-x atime` stays.
    extra = decision.transfer.receive_extra
    assert "sharenfs" not in extra and extra[extra.index("-x") + 1] == "atime"
    # A raw -R stream joins encrypted children to their root's key: change-key.
    raw_tree = dataclasses.replace(decision.transfer, replicate=True, raw=True)
    with pytest.raises(PreflightError) as info:
        refuse_missing_grants(read, raw_tree)
    assert info.value.figures["missing"] == "change-key"


def test_a_copy_mounting_over_a_path_in_use_is_decided_on_the_mounts_read() -> None:
    read = reading(mounts=ReceiveMounts({"backup/home": "/home"},
                                        {"backup/home": "where tank/home is mounted"}))
    request = Request("tank/home@d", "backup/home", Options(replicate=True))
    with pytest.raises(PreflightError) as info:
        decide_job(read.src.host, read.dst.host, request, read)
    assert info.value.reason is PreflightReason.MOUNT_COLLISION
    assert info.value.figures["way"] == "dataset"
    # An incremental -R: what is there stays where it is mounted (the read leaves it out), a
    # child new on the source since the last copy arrives mounted: refused as a full copy is.
    new = ReceiveMounts({"backup/home/www": "/var/www"}, {"backup/home/www": "in use"})
    read = reading([snap("backup/home", "b", 12, 20)], mounts=new)
    with pytest.raises(PreflightError) as info:
        decide_job(read.src.host, read.dst.host, request, read)
    assert "backup/home/www would mount on /var/www (in use)" in info.value.message
    # An incremental -p creates nothing, so what was read refuses nothing.
    request = Request("tank/home@d", "backup/home", Options(send_properties=True))
    read = reading([snap("backup/home", "b", 12, 20)],
                   mounts=ReceiveMounts({"backup/home": "/home"}, {"backup/home": "in use"}))
    assert decide_job(read.src.host, read.dst.host, request, read).transfer.kind == "incremental"
