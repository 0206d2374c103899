"""`--force` and `--discard-partial` for a delegated (non-root) user on a real OpenZFS 2.3 host.

The permission sets of docs/permissions.md were found by experiment on the guest; the first test
re-checks them directly with `zfs` as the user (each set works, and dropping any one of its
permissions makes zfs refuse), the others run zmigrate as the user `zm`: preflight names exactly
the missing permissions with their `zfs allow` line before anything runs, and with that line
granted the transfer succeeds.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from zmigrate.engine import zfs
from zmigrate.engine.errors import PreflightError
from zmigrate.engine.events import Progress
from zmigrate.engine.hosts import Host
from zmigrate.engine.hosts.login import HostSpec, connect
from zmigrate.engine.job import Job, Request
from zmigrate.engine.units import MiB

from .cli import send
from .test_openzfs import _data, _guid, _opts, _prop, _wait
from .vm import Vm, connect_dst

pytestmark = pytest.mark.openzfs
BASE = "create,mount,receive,readonly"  # what every delegated receive needs (test_openzfs.py)


@pytest.fixture
def zm(vm: Vm) -> Iterator[tuple[Host, Host]]:
    """(source, destination) control sessions as the unprivileged user `zm`."""
    vm.ssh("id zm >/dev/null 2>&1 || useradd -m -s /bin/sh zm; install -d -o zm -m 700 ~zm/.ssh"
           " && install -o zm -m 600 /root/.ssh/authorized_keys ~zm/.ssh/authorized_keys")
    src = connect(HostSpec("openzfs-vm", user="zm"))
    dst = connect_dst(vm, "zm")
    try:
        yield src, dst
    finally:
        src.close()
        dst.close()


def _refused(src: Host, dst: Host, snapshot: str, dest: str, **kw: object) -> str:
    """The preflight error of a job that must be refused for a missing permission."""
    with pytest.raises(PreflightError) as info:
        Job(src, dst, Request(snapshot, dest, _opts(**kw))).prepare()
    text = str(info.value)
    print(f"\nREFUSED: {text}")
    return text


# -- the verified sets, directly with zfs ----------------------------------------------------------
MINIMAL = r"""
set -u
P=dstpool/{tag}-m; S=srcpool/{tag}
zfs create $S && head -c 2M /dev/urandom > /$S/f && zfs snapshot $S@s1 &&
  head -c 2M /dev/urandom > /$S/g && zfs snapshot $S@s2 &&
  zfs send $S@s1 | head -c 1M > /tmp/{tag}.full &&
  zfs send -i @s1 $S@s2 | head -c 1M > /tmp/{tag}.inc &&
  chmod 644 /tmp/{tag}.full /tmp/{tag}.inc || exit 9
fresh() {{ zfs destroy -r $P 2>/dev/null; zfs create -u $P && zfs allow -u zm "$1" $P; }}
as_zm() {{ su zm -c "$1" >/dev/null 2>&1; echo "$2 $3 $?"; }}
for p in rollback,destroy,mount destroy,mount rollback,mount rollback,destroy; do
  fresh $p; zfs create -u $P/c && zfs snapshot $P/c@a && zfs snapshot $P/c@b
  as_zm "zfs rollback -r $P/c@a" rollback $p
done
for p in destroy,mount destroy {base}; do
  fresh $p; zfs receive -s -u $P/c < /tmp/{tag}.full 2>/dev/null
  as_zm "zfs receive -A $P/c" discard-full $p
  fresh $p; zfs send $S@s1 | zfs receive -u $P/c
  zfs receive -s -u $P/c < /tmp/{tag}.inc 2>/dev/null
  as_zm "zfs receive -A $P/c" discard-inc $p
done
# receive -F of a plain incremental onto a diverged copy: nothing beyond the receive set
zfs send -i @s1 $S@s2 > /tmp/{tag}.i12 && chmod 644 /tmp/{tag}.i12
fresh {base}; zfs send $S@s1 | zfs receive -u $P/c && zfs snapshot $P/c@local
as_zm "zfs receive -u -F $P/c < /tmp/{tag}.i12" receive-F {base}
# receive -F of an incremental -R stream whose source pruned a snapshot: + destroy
zfs create $S/r && zfs snapshot $S/r@x0 && zfs snapshot $S/r@x1 &&
  zfs send -R $S/r@x1 > /tmp/{tag}.r01 &&
  zfs destroy $S/r@x0 && zfs snapshot $S/r@x2 && zfs send -R -I @x1 $S/r@x2 > /tmp/{tag}.r12 &&
  chmod 644 /tmp/{tag}.r12 || exit 9
for p in {base} {base},destroy; do
  fresh $p; zfs receive -u $P/c < /tmp/{tag}.r01
  as_zm "zfs receive -u -F $P/c < /tmp/{tag}.r12" receive-F-R-pruned $p
done
zfs destroy -r $P; rm -f /tmp/{tag}.*
"""


def test_verified_permission_sets_are_exact(vm: Vm, zm: tuple[Host, Host], tag: str) -> None:
    out = vm.ssh(MINIMAL.format(tag=tag, base=BASE), timeout=300).stdout
    got = {(op, perms): int(rc) for op, perms, rc in (x.split() for x in out.splitlines())}
    print("\n" + out)
    ok = {("rollback", "rollback,destroy,mount"), ("discard-full", "destroy,mount"),
          ("discard-inc", "destroy,mount"), ("receive-F", BASE),
          ("receive-F-R-pruned", BASE + ",destroy")}
    assert len(got) == 13, out
    for key, rc in got.items():
        assert (rc == 0) == (key in ok), (key, rc)
    # ...and they are what preflight asks for
    assert set(zfs.PERMISSIONS["force"]) == {"rollback", "destroy", "mount"}
    assert set(zfs.PERMISSIONS["discard"]) == {"destroy", "mount"}
    assert set(zfs.PERMISSIONS["force_replicate"]) == {"destroy", "mount"}


# -- properties the receive sets -------------------------------------------------------------------
def test_properties_set_by_the_receive_need_their_permissions(vm: Vm, zm: tuple[Host, Host],
                                                              tag: str) -> None:
    """Without a property's permission zfs receives the data and exits 0, leaving the property
    out (only "cannot receive atime property ...: permission denied" on stderr): a `-p` stream's
    properties and each `--property` are named at preflight, and once granted they arrive."""
    src_host, dst_host = zm
    src, parent = f"srcpool/{tag}", f"dstpool/{tag}-px"
    copy = f"{parent}/copy"
    _data(vm, src, 1, extra="-o atime=off -o user:note=kept")
    vm.ssh(f"zfs allow -u zm send {src} && zfs create {parent} && "
           f"zfs allow -u zm {BASE} {parent}")
    kw = {"send_properties": True, "properties": (("compression", "lz4"),)}
    text = _refused(src_host, dst_host, f"{src}@s1", copy, **kw)
    assert f"zm lacks the ZFS permission(s) compression,atime,userprop on {parent}" in text
    assert f"zfs allow -u zm compression,atime,userprop {parent}" in text
    assert f"{copy}" not in vm.ssh(f"zfs list -H -o name -r {parent}").stdout  # nothing ran
    vm.ssh(f"zfs allow -u zm compression,atime,userprop {parent}")  # the line preflight printed
    assert Job(src_host, dst_host, Request(f"{src}@s1", copy, _opts(**kw))).run().verified
    assert (_prop(vm, copy, "compression"), _prop(vm, copy, "atime"),
            _prop(vm, copy, "user:note")) == ("lz4", "off", "kept")


def _zm_config(vm: Vm, tmp_path: Path) -> Path:
    """An ssh_config with the guest as two hosts, `zm-src` and `zm-dst`, both as user zm."""
    config = tmp_path / "ssh_config"
    config.write_text("".join(
        f"Host {alias}\n  HostName 127.0.0.1\n  Port {vm.port}\n  User zm\n"
        f"  IdentityFile {vm.key}\n  IdentitiesOnly yes\n  HostKeyAlias openzfs-vm\n"
        for alias in ("zm-src", "zm-dst")))
    return config


def test_a_tree_is_refused_whole_before_anything_runs(vm: Vm, zm: tuple[Host, Host], tag: str,
                                                     tmp_path: Path) -> None:
    """A tree as a delegated user: what any dataset's job would lack is named before the run's
    snapshot is taken or anything is received, one `zfs allow` line per host (before, the
    tree stopped halfway at the first dataset that set a property); once granted it runs,
    its properties arrive, the encrypted subtree keeps one key (its raw `-R` stream needs
    `change-key`, its root's `keylocation`), and no `-x` says "cannot receive ... permission
    denied"."""
    root, parent = f"srcpool/{tag}", f"dstpool/{tag}-tr"
    copy = f"{parent}/copy"
    _data(vm, root, 1)
    _data(vm, f"{root}/a", 1, extra="-o atime=off")
    _data(vm, f"{root}/b", 1)
    _data(vm, f"{root}/b/c", 1, extra="-o user:note=kept")
    vm.ssh(f"umask 077; printf %s lane-{tag}-passphrase > /root/{tag}.pass")
    _data(vm, f"{root}/secret", 1, snap=None, extra="-o encryption=on -o keyformat=passphrase "
          f"-o keylocation=file:///root/{tag}.pass")
    _data(vm, f"{root}/secret/inner", 1, snap=None)
    vm.ssh(f"zfs snapshot -r {root}/secret@s1")
    sent = (root, f"{root}/a", f"{root}/b", f"{root}/b/c", f"{root}/secret",
            f"{root}/secret/inner")
    vm.ssh(f"zfs allow -u zm send {root} && zfs create {parent} && "
           f"zfs allow -u zm {BASE} {parent}")
    config = _zm_config(vm, tmp_path)
    args = ("-r", f"zm-src:{root}", f"zm-dst:{copy}", "--snapshot")

    def untouched() -> None:
        assert vm.ssh(f"zfs list -H -o name -r {parent}").stdout.split() == [parent]
        assert sorted(vm.ssh(f"zfs list -H -t snapshot -o name -r {root}").stdout.split()) \
            == sorted(f"{d}@s1" for d in sent)

    r = send(vm, config, *args)  # --json: the refusal is its `error` event
    assert r.returncode != 0 and f"zm lacks the ZFS permission(s) hold,snapshot on {root}" \
        in r.stdout, r.stdout[-2000:]
    untouched()
    vm.ssh(f"zfs allow -u zm hold,snapshot {root}")
    r = send(vm, config, *args)
    said = re.search(rf"zfs allow -u zm (\S+) {parent}\b", r.stdout)
    assert r.returncode != 0 and said is not None, r.stdout[-2000:]
    assert set(said.group(1).split(",")) == {"atime", "userprop", "keylocation", "change-key"}
    untouched()
    vm.ssh(said.group(0))  # the line the refusal printed
    r = send(vm, config, *args)
    assert r.returncode == 0, r.stderr
    assert "cannot receive" not in r.stderr + r.stdout
    assert (_prop(vm, f"{copy}/a", "atime"), _prop(vm, f"{copy}/b/c", "user:note")) == (
        "off", "kept")
    assert _prop(vm, f"{copy}/secret/inner", "encryptionroot") == f"{copy}/secret"


# -- (a) --force on a diverged destination ---------------------------------------------------------
def test_force_rollback_as_delegated_user(vm: Vm, zm: tuple[Host, Host], tag: str) -> None:
    src_host, dst_host = zm
    src, parent = f"srcpool/{tag}", f"dstpool/{tag}-rx"
    copy = f"{parent}/copy"
    _data(vm, src, 2)
    vm.ssh(f"zfs allow -u zm send {src} && zfs create {parent} && "
           f"zfs allow -u zm {BASE} {parent}")
    assert Job(src_host, dst_host, Request(f"{src}@s1", copy, _opts())).run().verified
    vm.ssh(f"head -c 1M /dev/urandom > /{src}/f1 && zfs snapshot {src}@s2 && "
           f"zfs snapshot {copy}@local")  # the destination diverges
    # the incremental is sent with -I, which takes temporary holds on the source
    text = _refused(src_host, dst_host, f"{src}@s2", copy, force=True)
    assert f"zm lacks the ZFS permission(s) hold on {src}" in text
    assert f"zfs allow -u zm hold {src}" in text
    vm.ssh(f"zfs allow -u zm hold {src}")
    text = _refused(src_host, dst_host, f"{src}@s2", copy, force=True)
    assert f"zm lacks the ZFS permission(s) rollback,destroy on {copy}" in text
    assert f"zfs allow -u zm rollback,destroy {copy}" in text
    vm.ssh(f"zfs allow -u zm rollback {copy}")
    text = _refused(src_host, dst_host, f"{src}@s2", copy, force=True)
    assert f"permission(s) destroy on {copy}" in text and f"zfs allow -u zm destroy {copy}" in text
    assert _prop(vm, copy, "receive_resume_token") == "-"  # nothing ran
    assert f"{copy}@local" in vm.ssh(f"zfs list -H -o name -t snapshot {copy}").stdout
    vm.ssh(f"zfs allow -u zm destroy {copy}")  # the line preflight printed
    job = Job(src_host, dst_host, Request(f"{src}@s2", copy, _opts(force=True)))
    summary = job.run()
    assert job.plan is not None and job.plan.rollback and job.plan.rolled_back == ("local",)
    assert summary.verified and _guid(vm, f"{src}@s2") == _guid(vm, f"{copy}@s2")
    assert vm.ssh(f"zfs list -H -o name -t snapshot {copy}").stdout.split() == [
        f"{copy}@s1", f"{copy}@s2"]


# -- (b) --discard-partial of a real interrupted receive -------------------------------------------
def _cancelled(src: Host, dst: Host, snapshot: str, dest: str) -> None:
    """Start a rate-limited transfer, cancel it after ~5 MiB: a partial receive stays."""
    seen: list[object] = []
    job = Job(src, dst, Request(snapshot, dest, _opts(rate_limit=3 * MiB)), seen.append)
    job.start()
    try:
        assert _wait(lambda: job.done or any(isinstance(e, Progress) and e.done > 5 * MiB
                                             for e in seen), 90), "the transfer did not get going"
        assert not job.done, job.error
        job.cancel()
        assert job.wait(30), "the job did not end after cancel"
    finally:
        if not job.done:
            job.cancel()
            job.wait(30)
    assert job.partial_kept, job.error


def test_discard_partial_as_delegated_user(vm: Vm, zm: tuple[Host, Host], tag: str) -> None:
    src_host, dst_host = zm
    src, parent = f"srcpool/{tag}", f"dstpool/{tag}-rx"
    copy = f"{parent}/copy"
    _data(vm, src, 16)  # enough that the cancelled receive has checkpointed a resume token
    vm.ssh(f"zfs allow -u zm send,hold {src} && zfs create {parent} && "
           f"zfs allow -u zm {BASE} {parent}")
    # 1. an interrupted first receive: `receive -A` destroys the dataset itself
    _cancelled(src_host, dst_host, f"{src}@s1", copy)
    assert _prop(vm, copy, "receive_resume_token") not in ("", "-")
    text = _refused(src_host, dst_host, f"{src}@s1", copy, discard_partial=True)
    assert f"permission(s) destroy on {copy}" in text and f"zfs allow -u zm destroy {copy}" in text
    assert _prop(vm, copy, "receive_resume_token") not in ("", "-")  # nothing ran
    vm.ssh(f"zfs allow -u zm destroy {copy}")
    job = Job(src_host, dst_host, Request(f"{src}@s1", copy, _opts(discard_partial=True)))
    assert job.run().verified and job.plan is not None and job.plan.discard
    assert _guid(vm, f"{src}@s1") == _guid(vm, f"{copy}@s1")
    # 2. an interrupted incremental: the partial state is COPY/%recv (the grant went with the
    #    discarded dataset, so preflight asks again)
    vm.ssh(f"head -c 16M /dev/urandom > /{src}/f1 && zfs snapshot {src}@s2")
    _cancelled(src_host, dst_host, f"{src}@s2", copy)
    assert _prop(vm, copy, "receive_resume_token") not in ("", "-")
    text = _refused(src_host, dst_host, f"{src}@s2", copy, discard_partial=True)
    assert f"permission(s) destroy on {copy}" in text and f"zfs allow -u zm destroy {copy}" in text
    vm.ssh(f"zfs allow -u zm destroy {copy}")
    t0 = time.monotonic()
    job = Job(src_host, dst_host, Request(f"{src}@s2", copy, _opts(discard_partial=True)))
    summary = job.run()
    assert job.plan is not None and job.plan.discard and job.plan.kind == "incremental"
    print(f"\nDISCARD + INCREMENTAL: {time.monotonic() - t0:.1f} s")
    assert summary.verified and _guid(vm, f"{src}@s2") == _guid(vm, f"{copy}@s2")
    assert _prop(vm, copy, "receive_resume_token") == "-"
