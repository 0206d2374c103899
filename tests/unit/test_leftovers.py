"""engine/hosts/leftovers.py: `ps` and lease output read into the leftovers of earlier runs, judged
live, gone or unknown; and the tag and lease that hosts.py gives every process group."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from zmigrate.engine.errors import PreflightError, PreflightReason
from zmigrate.engine.hosts import LocalHost, key_dirs, leftovers
from zmigrate.engine.hosts.leftovers import (
    judge,
    names,
    parse_leases,
    parse_ps,
    parse_read,
    read_line,
    sections,
    tagged_groups,
)
from zmigrate.engine.job.step.why_failed import lost_error

DATA = Path(__file__).parent.parent / "data" / "ps"
LIVE, GONE = "zmigrate-job-803e9864115a", "zmigrate-job-4092071bbf46"


def _read(name: str) -> str:
    return (DATA / name).read_text()


def _scanned() -> list[leftovers.PsLine]:
    """The processes of the tagged groups as a job's read sees them (read_line's `@@ps`, for
    a destination none of them names: no second look)."""
    out = subprocess.run(["sh", "-c", read_line("zz/none", False)], capture_output=True,
                         text=True, check=True).stdout
    return parse_ps(sections(out)["ps"])


def test_linux_read_tells_a_live_run_from_a_gone_one() -> None:
    read = parse_read(_read("linux-procps-read.txt"), "tank/copy")
    assert 2024 in read.ports
    states = {x.tag: x.state for x in read.leftovers}
    assert states == {LIVE: "live", GONE: "dead"}
    gone = next(x for x in read.leftovers if x.tag == GONE)
    assert gone.pgids == [11496]
    # The work, not the wrapping shells: what the user recognises, with its PID.
    assert gone.describe() == "PID 11502 sleep 41, PID 11505 cat"


def test_leftovers_of_other_destinations_are_none_of_a_jobs_business() -> None:
    read = parse_read(_read("linux-procps-read.txt"), "tank/other")
    assert read.leftovers == ()
    # The script watches only when something tagged names the destination: no second look.
    assert parse_read(_read("linux-procps-read.txt").split("@@ps2")[0], "tank/copy").leftovers == ()


def test_freebsd_groups_are_found_by_their_tag_never_by_a_name() -> None:
    groups = {g.pgid: g for g in tagged_groups(parse_ps(_read("freebsd-sample.txt")))}
    # The sshd session's group (the wrapper) and the job-control group of the pipeline; the
    # untagged mbuffer | zfs receive of group 2400 is somebody else's.
    assert set(groups) == {2302, 2305}
    assert {p.pid for p in groups[2305].processes} == {2305, 2306, 2307, 2308}
    assert all(g.tag == "zmigrate-job-5e192d56a2e6" for g in groups.values())


def test_illumos_80_character_args_still_show_the_tag() -> None:
    lines = parse_ps(_read("illumos-sample.txt"))
    assert max(len(p.args) for p in lines) <= 80
    groups = {g.pgid: g for g in tagged_groups(lines)}
    # The outer wrapper's tag is past its 80 characters: only the group's own shells show it.
    assert set(groups) == {4413}
    assert [p.program for p in groups[4413].processes] == ["sh", "sh", "mbuffer", "zfs"]
    leftover = leftovers.Leftover("zmigrate-job-0a1b2c3d4e5f", (groups[4413],), "dead")
    assert "PID 4416 /usr/sbin/zfs receive -s rpool/backup/copy" in leftover.describe()
    assert names(groups[4413].processes[-1].args, "rpool/backup/copy")


@pytest.mark.parametrize(("args", "expected"), [
    ("zfs receive -F pool/copy", True),
    ("sh -c mbuffer -I 1 | zfs receive -s 'pool/copy'", True),
    ("zfs receive pool/copy/child", True),
    ("zfs send pool/copy@s", True),
    ("zfs receive pool/copy2", False),
    ("zfs receive xpool/copy", False),
    ("zfs receive pool/cop", False),
])
def test_a_destination_is_named_as_a_whole(args: str, expected: bool) -> None:
    assert names(args, "pool/copy") is expected


def test_a_run_without_a_lease_cannot_be_judged() -> None:
    groups = tagged_groups(parse_ps(_read("freebsd-sample.txt")))
    assert judge(groups, {}, {}) == "unknown"
    key = ("zmigrate-job-5e192d56a2e6", 2305)
    assert judge(groups, {key: "3"}, {key: "3"}) == "dead"
    assert judge(groups, {key: "3"}, {key: "5"}) == "live"
    assert judge(groups, {}, {key: "1"}) == "live"  # its first beat came while watched
    assert parse_leases("zmigrate-job-5e192d56a2e6.2305 7\nnot-a-lease 1\n") == {key: "7"}


def test_the_scan_never_takes_itself_for_a_tagged_group() -> None:
    line = read_line("pool/my copy", True)
    assert re.search(r"zmigrate-job-[0-9a-f]{12}", line) is None
    assert "W='pool/my copy'" in line


def test_a_live_or_unknown_run_is_refused_with_its_pid() -> None:
    groups = tuple(g for g in tagged_groups(parse_ps(_read("freebsd-sample.txt")))
                   if g.pgid == 2305)
    host = LocalHost("nas")
    for state in ("live", "unknown"):
        found = (leftovers.Leftover("zmigrate-job-5e192d56a2e6", groups, state),)
        with pytest.raises(PreflightError) as err:
            leftovers.settle(host, found, "tank/copy", lambda _e: None)
        assert err.value.reason is PreflightReason.BUSY
        assert "PID 2308 zfs receive -s tank/copy" in err.value.message
        # The advice re-checks the tag in the same line before it signals the group.
        assert err.value.fix is not None and (
            "for g in 2305; do if pgrep -g \"$g\" -f zmigrate-job-5e192d56a2e6 >/dev/null"
            in err.value.fix) and 'pkill -TERM -g "$G"' in err.value.fix


def test_a_group_carries_the_tag_and_a_lease_that_moves_while_beating() -> None:
    host = LocalHost()
    proc = host.spawn("sleep 30")
    try:
        pgid = proc.pgid
        assert pgid is not None
        lease = Path.home() / ".cache" / "zmigrate" / "leases" / f"{host.tag}.{pgid}"
        deadline = time.monotonic() + 10
        while not (lease.exists() and lease.read_text().strip() not in ("", "1")) \
                and time.monotonic() < deadline:
            time.sleep(0.2)
        assert int(lease.read_text()) >= 2
        error = lost_error("the receiver failed", host, [proc])
        assert f"process group {pgid} (sleep 30)" in error.message
        assert error.fix is not None and f"for g in {pgid}; do" in error.fix
        assert f"-f {host.tag}" in error.fix and 'pkill -TERM -g "$G"' in error.fix
        assert f"grep '[z]{host.tag[1:]}'" in error.fix
    finally:
        proc.kill()
        proc.wait(5)
        host.close()
    deadline = time.monotonic() + 5
    while lease.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not lease.exists(), "a group's lease goes with it"


def test_a_group_is_stopped_only_while_it_still_holds_the_tag_it_was_judged_by() -> None:
    """The stop re-reads each group's tag in the same command that signals it: a group number
    now held by another group (another tag: the judged group ended, its number was reused) is
    left alone; the group still tagged is stopped."""
    judged, other = "zmigrate-job-aaaaaaaaaaaa", "zmigrate-job-bbbbbbbbbbbb"
    procs = [subprocess.Popen(["sh", "-c", f"sleep 60; : {tag}"], start_new_session=True)
             for tag in (judged, other)]
    try:
        groups = tuple(leftovers.Group(judged, p.pid, ()) for p in procs)
        line = leftovers.stop_line(LocalHost("nas"), leftovers.Leftover(judged, groups, "dead"))
        r = subprocess.run(["sh", "-c", line], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
        assert procs[0].wait(5) is not None
        time.sleep(0.5)
        assert procs[1].poll() is None, "a group that no longer holds the tag was signalled"
        # The user's one-liner does the same.
        kill = leftovers.checked_kill(LocalHost("nas"), [procs[1].pid], judged)
        subprocess.run(["sh", "-c", kill], check=True, timeout=30)
        time.sleep(0.5)
        assert procs[1].poll() is None
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(5)
    with pytest.raises(ValueError):
        leftovers.checked_kill(LocalHost("nas"), [1], "zmigrate-job-x; reboot")


def test_without_a_home_no_lease_is_written_anywhere(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    """No shared fallback (it was /tmp/.cache/...): a login without HOME keeps no lease (its
    groups are then refused, never stopped, by a later run); with one, the lease directory is
    private."""
    for home in (None, tmp_path):
        if home is None:
            monkeypatch.delenv("HOME", raising=False)
        else:
            monkeypatch.setenv("HOME", str(home))
        host = LocalHost()
        before = set(Path("/tmp").glob(".cache/zmigrate/leases/*"))
        proc = host.spawn("sleep 3; echo ran")
        new: set[Path] = set()
        try:
            deadline = time.monotonic() + 2.5  # a few heartbeats while it runs
            while time.monotonic() < deadline:
                new |= set(Path("/tmp").glob(".cache/zmigrate/leases/*")) - before
                time.sleep(0.1)
            assert proc.wait(20) == 0
        finally:
            host.close()
        assert new == set()
        if home is not None:
            leases = home / ".cache" / "zmigrate" / "leases"
            assert leases.is_dir() and leases.stat().st_mode & 0o077 == 0


def test_stopping_a_gone_runs_group_removes_the_key_directories_its_shell_names() -> None:
    """A group whose shell cannot clean up (TERM ignored, so the stop KILLs it) leaves its key
    directory; the stop removes the directories the group's command lines name, by the
    removal rule: a named directory holding a file no step made keeps that file. Real sh, ps,
    pkill."""
    host = LocalHost()
    mine, crowded = key_dirs.key_dirs()
    for d in (mine, crowded):
        Path(d).mkdir(mode=0o700)
        for name in ("own.key", "err"):
            (Path(d) / name).write_text("secret")
    (Path(crowded) / "notes.txt").write_text("not ours")
    # The ends name theirs in their clean-up; this one never gets to run it.
    proc = host.spawn(f"trap '' TERM; : {mine} {crowded}; sleep 300")
    try:
        def group() -> leftovers.Group | None:
            # As the scan reads them.
            return next((g for g in tagged_groups(_scanned()) if g.pgid == proc.pgid
                         and any(p.program == "sleep" for p in g.processes)), None)
        deadline = time.monotonic() + 10
        while (found := group()) is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert found is not None, proc.pgid
        leftover = leftovers.Leftover(found.tag, (found,), "dead")
        assert leftover.key_dirs() == sorted([mine, crowded])
        assert leftovers.settle(host, (leftover,), "tank/copy", lambda _e: None)
        assert proc.wait(10) is not None
        assert not Path(mine).exists()
        assert sorted(p.name for p in Path(crowded).iterdir()) == ["notes.txt"]
    finally:
        proc.kill(signal.SIGKILL)
        host.close()
        for d in (mine, crowded):
            shutil.rmtree(d, ignore_errors=True)


def test_only_key_directories_of_their_shape_are_named() -> None:
    good = "/tmp/zmigrate-tls-" + "0a" * 12 + "-d"
    lines = [f"sh -c trap 'rm -f {good}/own.key; rmdir {good}' EXIT",
             "sh -c rm -rf /tmp/zmigrate-tls-notes /tmp/zmigrate-tls-" + "0a" * 12 + "-dx",
             "cat /tmp/zmigrate-tls-" + "0A" * 12 + "-s"]
    assert key_dirs.named_in(lines) == [good]


@pytest.mark.lab
def test_a_tag_another_user_plants_blocks_no_job() -> None:
    """A process of another user whose command line holds a tag and the destination (anyone
    can start one: `sleep` with such arguments) is no run of ours: the scan leaves its group
    out, where the same line run by this user is found. Real sh, ps and runuser (as root)."""
    tag = "zmigrate-job-0123456789ab"
    # The line travels in the environment: no wrapper's own argv names the tag.
    env = {**os.environ, "L": f"exec -a 'sh -c : {tag}; zfs receive tank/copy' sleep 300"}
    nobody = int(subprocess.run(["id", "-u", "nobody"], capture_output=True, text=True,
                                check=True).stdout)
    planted = subprocess.Popen(["runuser", "-u", "nobody", "--", "setsid", "bash", "-c",
                                'eval "$L"'], env=env)
    ours = subprocess.Popen(["setsid", "bash", "-c", 'eval "$L"'], env=env)
    try:
        def owners() -> dict[int, int]:
            """The tag's processes as the scan finds them, with their owners."""
            return {p.pid: os.stat(f"/proc/{p.pid}").st_uid
                    for g in tagged_groups(_scanned()) if g.tag == tag for p in g.processes}

        def planted_runs() -> bool:
            out = subprocess.run(["pgrep", "-u", "nobody", "-f", tag], capture_output=True)
            return out.returncode == 0
        deadline = time.monotonic() + 10
        while (ours.pid not in owners() or not planted_runs()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert planted_runs()
        found = owners()
        assert ours.pid in found, found
        assert nobody not in found.values(), found
    finally:
        for proc in (planted, ours):
            proc.kill()
            proc.wait()
        subprocess.run(["pkill", "-u", "nobody", "-f", tag])
