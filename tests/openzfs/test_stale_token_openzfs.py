"""A stale resume token on a real OpenZFS 2.3 host (issue 30, item 10).

An incremental send is interrupted (its resume token kept on the destination), then the
snapshot it was sending is destroyed on the source, as syncoid's own test suite does
(tests/syncoid/005_reset_resume_state). The next `zmigrate send` names the token as stale and
offers only `--discard-partial` (not `--resume`, which zfs cannot do: "cannot resume send:
... no longer exists"); `--resume` gets the same refusal, not zfs's raw words; the GUI's read
of the partial receive is refused the same way; and `--discard-partial` then works: the copy is
sent from the common snapshot, verified, and the token is gone.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lab.util import Run, zmigrate

from zmigrate.engine import zfs
from zmigrate.engine.errors import PreflightError, PreflightReason
from zmigrate.engine.events import Progress
from zmigrate.engine.job import Job, Request, partial_receive
from zmigrate.engine.units import MiB

from .test_openzfs import _guid, _leftovers, _opts, _prop, _wait
from .vm import Pair, Vm

pytestmark = pytest.mark.openzfs


def _send(vm: Vm, config: Path, *args: str) -> Run:
    """`zmigrate send ARGS --json` between the guest's two aliases (a tcp transfer)."""
    env = {**os.environ, "ZMIGRATE_SSH_CONFIG": str(config),
           "ZMIGRATE_KNOWN_HOSTS": str(vm.known_hosts)}
    env.pop("SSH_AUTH_SOCK", None)
    return zmigrate(env, "send", *args, "--json", "--no-history", "--buffer", "16M",
                    "--connect-address", "127.0.0.1", "--allow-address", "127.0.0.1",
                    timeout=300)


def _interrupt_incremental(pair: Pair, src: str, dst: str) -> None:
    """Send @s1 -> @s2 at 3 MiB/s and cancel it after ~5 MiB: the token stays on `dst`."""
    seen: list[object] = []
    job = Job(pair.src, pair.dst, Request(f"{src}@s2", dst, _opts(rate_limit=3 * MiB)),
              seen.append, src_caps=pair.src_caps, dst_caps=pair.dst_caps)
    job.start()
    try:
        assert _wait(lambda: any(isinstance(e, Progress) and e.done > 5 * MiB for e in seen),
                     90), "the incremental did not get going"
        job.cancel()
        assert job.wait(30), "the job did not end after the cancel"
    finally:
        if not job.done:
            job.cancel()
            job.wait(30)
    assert job.plan is not None and job.plan.base == "s1", "an incremental from @s1"
    assert job.partial_kept


def test_a_stale_token_offers_only_discard_which_works(pair: Pair, vm: Vm, tag: str,
                                                       tmp_path: Path) -> None:
    src, dst = f"srcpool/{tag}", f"dstpool/{tag}"
    vm.ssh(f"zfs create {src} && head -c 2M /dev/urandom > /{src}/f0 && zfs snapshot {src}@s1")
    assert Job(pair.src, pair.dst, Request(f"{src}@s1", dst, _opts()),
               src_caps=pair.src_caps, dst_caps=pair.dst_caps).run().verified
    vm.ssh(f"head -c 24M /dev/urandom > /{src}/f1 && zfs snapshot {src}@s2")
    _interrupt_incremental(pair, src, dst)
    token = _prop(vm, dst, "receive_resume_token")
    assert token not in ("", "-"), "the interrupted incremental kept no token"
    assert _wait(lambda: _leftovers(vm, tag) == [], 10), _leftovers(vm, tag)
    # The snapshot the token sends is destroyed on the source; the source moves on.
    vm.ssh(f"zfs destroy {src}@s2 && head -c 1M /dev/urandom > /{src}/f2 && "
           f"zfs snapshot {src}@s3")
    # What zfs itself says of the token now (its nvlist dump, then the refusal).
    said = vm.ssh(f"zfs send -nvP -t {token}", check=False)
    assert said.returncode != 0 and "cannot resume send" in said.stderr, said.stderr
    assert zfs.stale_token(said.stdout + "\n" + said.stderr) == zfs.StaleToken(f"{src}@s2")
    print(f"\nSTALE TOKEN: zfs says: {said.stderr.strip()}")

    config = tmp_path / "ssh_config"
    config.write_text(vm.ssh_config.read_text() + f"\nHost openzfs-dst\n  HostName 127.0.0.1\n"
                      f"  Port {vm.port}\n  User root\n  IdentityFile {vm.key}\n")
    where = (f"openzfs-vm:{src}@s3", f"openzfs-dst:{dst}")
    for extra in ((), ("--resume",)):  # no choice made, and the way that cannot work
        r = _send(vm, config, *where, *extra)
        assert r.returncode == 1, (extra, r.stdout, r.stderr)
        error = r.of("error")[-1]
        assert error["reason"] == PreflightReason.STALE_TOKEN.value, (extra, error)
        assert "stale" in error["message"] and f"{src}@s2" in error["message"], error
        assert "--discard-partial" in error["fix"] and "--resume" not in error["fix"], error
        assert "--resume" not in error["message"], error
        assert "cannot resume send" not in r.stdout + r.stderr, "zfs's raw words leaked"
        assert _prop(vm, dst, "receive_resume_token") == token, "nothing was touched"
    # The wizard's Destination page reads the partial receive the same way.
    with pytest.raises(PreflightError) as info:
        partial_receive(pair.src, pair.dst, dst, src_caps=pair.src_caps,
                        dst_caps=pair.dst_caps)
    assert info.value.reason is PreflightReason.STALE_TOKEN

    # The one way offered works: the partial is dropped, @s3 goes from @s1, verified.
    r = _send(vm, config, *where, "--discard-partial")
    assert r.returncode == 0, r.stdout + r.stderr
    plan = r.of("plan")[-1]
    assert plan["base"] == "s1", plan
    assert any("receive -A" in c["command"] for c in plan["commands"]), plan["commands"]
    assert [x["kind"] for x in plan["destroys"]] == ["partial"], plan["destroys"]
    assert r.of("done")[-1]["verified"] is True
    assert _prop(vm, dst, "receive_resume_token") == "-"
    assert _guid(vm, f"{src}@s3") == _guid(vm, f"{dst}@s3")
    assert _guid(vm, f"{src}@s1") == _guid(vm, f"{dst}@s1")
