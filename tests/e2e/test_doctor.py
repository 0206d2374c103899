"""`zmigrate doctor` on the lab: every stage measured, the slowest named, nothing left behind
(processes, ports, the write test's dataset), and a cancel cleans up within 5 s."""

from __future__ import annotations

import json
import secrets
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from lab.losses import LossWatch, shown_in_json
from lab.sshd import Lab
from lab.util import (
    doctor_processes,
    established_to,
    port_listening,
    wait_until,
    write_random_files,
    zfs,
)
from lab.zfsfuse import Pool

from zmigrate.engine import plain_words
from zmigrate.engine.doctor import (
    TEMP_PREFIX,
    Doctor,
    DoctorReport,
    StageStarted,
    choose_parent,
    temp_dataset,
    write_test_losses,
)
from zmigrate.engine.findings import AdviceKind
from zmigrate.engine.hosts import Host
from zmigrate.engine.plan import Options

pytestmark = [pytest.mark.lab, pytest.mark.timeout(180)]

FAST = "aes128-gcm@openssh.com"  # one fast cipher besides the default keeps the test short


def _ssh_options(lab: Lab) -> list[str]:
    return [f"--ssh-option={o}" for o in lab.ssh_options()[1::2]]


def temp_datasets(pool: Pool) -> list[str]:
    names = zfs("list", "-H", "-o", "name", "-r", pool.name).split()
    return [n for n in names if TEMP_PREFIX in n]


@pytest.fixture
def snapshot(pools: tuple[Pool, Pool]) -> str:
    src, _ = pools
    ds = f"{src.name}/ds"
    zfs("create", ds)
    write_random_files(src.mountpoint / "ds", 24, files=6)
    zfs("snapshot", f"{ds}@snap")
    return f"{ds}@snap"


def test_every_stage_reports_a_rate_and_the_slowest_is_the_bottleneck(
        lab: Lab, pools: tuple[Pool, Pool], snapshot: str) -> None:
    _, dst = pools
    r = lab.zmigrate("doctor", f"lab-src:{snapshot}", f"lab-dst:{dst.name}", "--seconds", "2",
                     "--write-test", "--cipher", FAST, "--json", *_ssh_options(lab))
    assert r.returncode == 0, r.stderr + r.stdout
    events = r.events
    # First what it destroys (its write test's own dataset), then each stage, then the report.
    assert [e["event"] for e in events] == ["doctor_plan"] + ["doctor_stage"] * 7 + [
        "doctor_report"]
    report = events[-1]
    stages = report["stages"]
    # Both lab hosts have socat: private is the way between them, its tls stage the wire's.
    assert report["transport"] == "private"
    assert [s["name"] for s in stages] == [
        "source_read", "compress", "network", "ssh_default", f"ssh_{FAST}", "tls",
        "destination_write"]
    # The compressor is measured on the snapshot's random data: it gains nothing, so it is
    # advised off (not on the path: no --compress).
    squeeze = stages[1]
    assert squeeze["tool"] == "zstd" and 0.9 < squeeze["ratio"] < 1.1, squeeze
    assert "compress_off" in {a["kind"] for a in report["advice_items"]}
    assert [s["name"] for s in events[1:-1]] == [s["name"] for s in stages]  # as they ended
    for s in stages:
        assert s["error"] is None, s
        assert isinstance(s["rate"], float), s
        assert s["rate"] > 1024 * 1024, s
        assert {c["host"] for c in s["cpu"]} == {"lab-src", "lab-dst"}
        assert all(c["busy"] is not None for c in s["cpu"]), s
    on_path = [s for s in stages if s["in_path"]]
    assert {s["name"] for s in on_path} == {"source_read", "tls", "destination_write"}
    slowest = min(on_path, key=lambda s: s["rate"])
    assert report["bottleneck"] == slowest["name"]
    assert report["expected_rate"] == slowest["rate"]
    assert any("--buffer" in a for a in report["advice"])
    assert report["cancelled"] is False
    # Nothing left behind: no temp dataset, no process of this run, no listening port.
    assert temp_datasets(dst) == []
    assert doctor_processes(report["run_id"]) == []
    port = next(s for s in stages if s["name"] == "network")["port"]
    assert not port_listening(port)


def test_table_names_the_bottleneck_and_skips_ssh_it_cannot_use(
        lab: Lab, pools: tuple[Pool, Pool], snapshot: str) -> None:
    _, dst = pools
    # Without the lab's ssh options the source's own ssh cannot log in to lab-dst.
    r = lab.zmigrate("doctor", f"lab-src:{snapshot}", f"lab-dst:{dst.name}", "--seconds", "1")
    assert r.returncode == 0, r.stderr + r.stdout
    out = r.stdout
    assert "The source cannot ssh to the destination: " in out
    assert "\n* " in out  # the bottleneck row is marked
    assert "bottleneck: " in out
    assert "expect about " in out
    assert "advice:" in out


def _cancel_during(lab_hosts: tuple[Host, Host], stage: str, snapshot: str | None,
                   parent: str | None) -> tuple[Doctor, DoctorReport, float]:
    src, dst = lab_hosts
    started = threading.Event()
    ports: list[int] = []

    def on_event(event: object) -> None:
        if isinstance(event, StageStarted) and event.name == stage:
            started.set()

    doctor = Doctor(src, dst, snapshot=snapshot, parent=parent, seconds=60,
                    options=Options(), emit=on_event, stages=[stage])
    box: list[DoctorReport] = []
    thread = threading.Thread(target=lambda: box.append(doctor.run()), name="test-doctor")
    thread.start()
    try:
        assert started.wait(30)
        # Let the stage's processes come up (and the listener listen) before cancelling.
        assert wait_until(lambda: bool(doctor_processes(doctor.run_id)), 10)
        if stage == "network":
            assert wait_until(lambda: bool(_listeners(doctor.run_id)), 10)
            ports += [int(p.split(":")[-1]) for p in _listeners(doctor.run_id)]
            # mbuffer -I stops listening once the sender is in: listening, or connected.
            assert wait_until(lambda: all(port_listening(p) or established_to(p)
                                          for p in ports), 10)
        t0 = time.monotonic()
        doctor.cancel()
        thread.join(10)
        took = time.monotonic() - t0
    finally:
        doctor.cancel()
        thread.join(30)
    assert box, "the doctor raised"
    for port in ports:
        assert not port_listening(port)
    return doctor, box[0], took


def _listeners(run_id: str) -> list[str]:
    """The -I argument of this run's listening mbuffer."""
    out = []
    for line in doctor_processes(run_id):
        words = line.split()
        if "mbuffer" in line and "-I" in words:
            out.append(words[words.index("-I") + 1])
    return out


def test_cancel_mid_network_stage_cleans_up_within_5s(lab_hosts: tuple[Host, Host]) -> None:
    doctor, report, took = _cancel_during(lab_hosts, "network", None, None)
    assert took < 5, f"cancel took {took:.1f} s"
    assert report.cancelled
    assert report.stages[0].error == "cancelled"
    assert wait_until(lambda: doctor_processes(doctor.run_id) == [], 2), \
        doctor_processes(doctor.run_id)


def test_cancel_mid_write_test_destroys_the_temp_dataset_within_5s(
        lab_hosts: tuple[Host, Host], pools: tuple[Pool, Pool]) -> None:
    _, dst = pools
    doctor, report, took = _cancel_during(lab_hosts, "destination_write", None, dst.name)
    assert took < 5, f"cancel took {took:.1f} s"
    assert report.cancelled
    assert doctor.temp_dataset is not None
    assert doctor.temp_dataset.startswith(f"{dst.name}/{TEMP_PREFIX}")
    assert temp_datasets(dst) == []
    assert doctor_processes(doctor.run_id) == []


def _free_of(name: str) -> int:
    return int(zfs("get", "-Hp", "-o", "value", "available", name).strip())


def _free(pool: Pool) -> int:
    return _free_of(pool.name)


def test_the_write_stage_runs_by_default_within_a_safe_share_and_leaves_nothing(
        lab: Lab, snapshot: str) -> None:
    before = {p: _free_of(p) for p in zfs("list", "-H", "-o", "name", "-d", "0").split()}
    r = lab.zmigrate("doctor", f"lab-src:{snapshot}", "lab-dst", "--seconds", "20", "--no-ssh",
                     "--json")
    assert r.returncode == 0, r.stderr + r.stdout
    report = r.events[-1]
    write = next(s for s in report["stages"] if s["name"] == "destination_write")
    assert write["error"] is None and isinstance(write["rate"], float), json.dumps(write)
    # It wrote into the destination's pool with the most free space (the lab's "hosts" share
    # one zfs-fuse, so any pool of this machine), never more than a tenth of its free space.
    pool = write["dataset"].split("/", 1)[0]
    assert before[pool] == max(before.values())
    # (mbuffer counts in tenths of a MiB: its total may round past the limit a little)
    assert 0 < write["bytes"] <= 1.01 * write["limit"] <= 1.01 * (0.1 * write["free"] + 1)
    assert report["unmeasured"] == [] and report["expected_rate"] is not None
    assert report["expected_rate"] == min(s["rate"] for s in report["stages"] if s["in_path"])
    assert TEMP_PREFIX not in zfs("list", "-H", "-o", "name", "-r", pool)
    assert abs(_free_of(pool) - before[pool]) < 0.02 * before[pool]  # nothing kept


def test_the_doctor_names_the_dataset_it_destroys_and_loses_nothing_else(
        lab: Lab, pools: tuple[Pool, Pool], snapshot: str,
        loss_watch: type[LossWatch]) -> None:
    """The doctor's list: its write test's own dataset (made and destroyed by the run), named
    before it runs (--json's doctor_plan; the text's `Will be destroyed on`); around it, the
    destination's datasets, snapshots and files lose nothing else."""
    _, dst = pools
    zfs("create", f"{dst.name}/keep")
    write_random_files(dst.mountpoint / "keep", 1, files=2)
    zfs("snapshot", f"{dst.name}/keep@mine")
    watch = loss_watch(dst.name)
    watch.start()
    r = lab.zmigrate("doctor", f"lab-src:{snapshot}", f"lab-dst:{dst.name}", "--seconds", "2",
                     "--no-ssh", "--json")
    assert r.returncode == 0, r.stderr + r.stdout
    (lost,) = shown_in_json(r.stdout)
    report = r.events[-1]
    write = next(s for s in report["stages"] if s["name"] == "destination_write")
    assert (lost["kind"], lost["name"]) == ("dataset", write["dataset"]), lost
    assert lost["name"].startswith(f"{dst.name}/{TEMP_PREFIX}")
    watch.check_json(r.stdout)
    assert temp_datasets(dst) == []
    r = lab.zmigrate("doctor", f"lab-src:{snapshot}", f"lab-dst:{dst.name}", "--seconds", "1",
                     "--no-ssh", "--stage", "destination_write")
    assert r.returncode == 0, r.stderr + r.stdout
    assert f"Will be destroyed on lab-dst:\n  - dataset {dst.name}/{TEMP_PREFIX}" in r.stderr
    assert "(the write test's own: created by this run, destroyed at its end)" in r.stderr


def test_a_pool_too_small_for_a_safe_write_test_is_named_not_filled(
        lab: Lab, make_pool: Any, snapshot: str) -> None:
    tiny = make_pool("tiny", size_mb=96)  # a tenth of its free space is under 32 MiB
    free = _free(tiny)
    r = lab.zmigrate("doctor", f"lab-src:{snapshot}", f"lab-dst:{tiny.name}", "--seconds", "2",
                     "--no-ssh")
    assert r.returncode == 0, r.stderr + r.stdout
    out = r.stdout
    assert "not measured:" in out and f"free under {tiny.name}" in out, out
    assert "expect about" not in out and "slowest measured: " in out
    assert temp_datasets(tiny) == [] and abs(_free(tiny) - free) < 0.02 * free


def test_without_a_source_snapshot_the_doctor_claims_no_end_to_end_rate(
        lab: Lab, pools: tuple[Pool, Pool]) -> None:
    _, dst = pools
    r = lab.zmigrate("doctor", "lab-src", f"lab-dst:{dst.name}", "--seconds", "2", "--no-ssh",
                     "--no-write-test", "--json")
    assert r.returncode == 0, r.stderr + r.stdout
    report = r.events[-1]
    assert report["expected_rate"] is None
    assert report["upper_bound"] == next(s["rate"] for s in report["stages"]
                                         if s["name"] == "tls")  # private's wire (the default)
    assert set(report["unmeasured"]) == {"source_read", "destination_write"}
    notes = {s["name"]: [n["kind"] for n in s["notes"]] for s in report["stages"]}
    assert notes["source_read"] == ["needs_snapshot"]
    assert notes["destination_write"] == ["left_out"]


def _held_write_test(dst: Host, pool: Pool, monkeypatch: pytest.MonkeyPatch, seconds: int,
                     wait: float) -> tuple[Doctor, str, subprocess.Popen[bytes]]:
    """A doctor whose write test (a stand-in) leaves its dataset held by a process inside it
    for `seconds`; destroying it is retried for `wait` seconds."""
    from zmigrate.engine.doctor import stages
    from zmigrate.engine.doctor.results import StageResult

    doctor = Doctor(dst, dst, parent=pool.name, stages=("destination_write",))
    ds = doctor.temp_dataset
    assert ds is not None
    zfs("create", ds)
    # As the write test does: the dataset its create made, by guid (only that is destroyed).
    doctor.temp_guid = zfs("get", "-Hp", "-o", "value", "guid", ds).strip()
    mnt = zfs("get", "-H", "-o", "value", "mountpoint", ds).strip()
    holder = subprocess.Popen(["sleep", str(seconds)], cwd=mnt)
    monkeypatch.setattr(stages, "DESTROY_WAIT", wait)
    monkeypatch.setattr(doctor, "_write_test", lambda: StageResult(
        "destination_write", "destination write", None, 0.0, 0, True, error="stand-in"))
    return doctor, ds, holder


def test_a_busy_write_test_dataset_is_forced_and_else_named_with_its_command(
        lab_hosts: tuple[Host, Host], pools: tuple[Pool, Pool],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The write test's own dataset, held busy (a process inside it): the doctor forces its
    unmount and retries; while it still stays, the report says so with the exact command."""
    _, dst_pool = pools
    _, dst = lab_hosts
    doctor, ds, holder = _held_write_test(dst, dst_pool, monkeypatch, 60, 2.0)
    try:
        result = doctor._destination_write()
    finally:
        holder.kill()
        holder.wait()
    error = result.details["cleanup_error"]
    assert f"could not destroy {ds} on {dst.label} (it is busy)" in error
    assert f"`zfs destroy -r -f {ds}`" in error
    assert doctor._destroy_temp()  # nothing holds it now: gone
    assert zfs("list", "-H", "-o", "name", "-r", dst_pool.name).split().count(ds) == 0


def test_a_write_test_dataset_busy_for_a_moment_is_destroyed_on_a_retry(
        lab_hosts: tuple[Host, Host], pools: tuple[Pool, Pool],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Busy at the first `zfs destroy` only (a process inside it for a moment): a retry
    removes it, and the report has no clean-up error."""
    _, dst_pool = pools
    _, dst = lab_hosts
    doctor, ds, holder = _held_write_test(dst, dst_pool, monkeypatch, 1, 10.0)
    destroys: list[tuple[list[str], bool]] = []
    run = dst.run

    def recorded(line: str, **kw: Any) -> Any:
        result = run(line, **kw)
        if "zfs destroy" in line:  # with the guid check in the same command
            destroys.append((line.split(), result.ok))
        return result

    monkeypatch.setattr(dst, "run", recorded)
    try:
        result = doctor._destination_write()
    finally:
        holder.kill()
        holder.wait()
    assert "cleanup_error" not in result.details, result.details
    assert zfs("list", "-H", "-o", "name", "-r", dst_pool.name).split().count(ds) == 0
    assert destroys[0][1] is False, destroys  # refused while busy
    assert destroys[-1][1] is True and "-f" in destroys[-1][0], destroys  # forced, then gone


def _blocked_mountpoint(doctor: Doctor, pool: Pool) -> Path:
    """A non-empty directory where the write test's dataset would mount: its `zfs create`
    makes the dataset, then says "filesystem successfully created, but not mounted"."""
    ds = doctor.temp_dataset
    assert ds is not None
    blocker = pool.mountpoint / ds.split("/", 1)[1]
    blocker.mkdir()
    (blocker / "someone-elses.txt").write_text("not the doctor's\n")
    return blocker


def test_a_write_test_dataset_that_cannot_mount_is_named_and_destroyed(
        lab_hosts: tuple[Host, Host], pools: tuple[Pool, Pool]) -> None:
    """Created but never mounted (its mountpoint is a directory in use): the stage fails
    with zfs's reason, writes nothing, and the dataset it made is destroyed all the same."""
    _, dst_pool = pools
    _, dst = lab_hosts
    doctor = Doctor(dst, dst, parent=dst_pool.name, stages=("destination_write",))
    blocker = _blocked_mountpoint(doctor, dst_pool)
    result = doctor._destination_write()
    assert result.rate is None and result.bytes == 0
    assert result.error == (f"{doctor.temp_dataset} was created but could not be mounted: "
                            f"cannot mount '{blocker}': directory is not empty"), result.error
    assert "cleanup_error" not in result.details, result.details
    assert TEMP_PREFIX not in zfs("list", "-H", "-o", "name", "-r", dst_pool.name)
    assert (blocker / "someone-elses.txt").read_text() == "not the doctor's\n"


def test_a_write_test_dataset_whose_first_mount_failed_is_mounted_on_a_retry(
        lab_hosts: tuple[Host, Host], pools: tuple[Pool, Pool],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The mount that `zfs create` tried failed for a moment (its mountpoint was in use):
    the write test mounts it again and measures."""
    _, dst_pool = pools
    _, dst = lab_hosts
    doctor = Doctor(dst, dst, parent=dst_pool.name, stages=("destination_write",),
                    seconds=2)
    blocker = _blocked_mountpoint(doctor, dst_pool)
    mounts: list[bool] = []
    execute = dst.execute

    def freed_before_the_retry(argv: Any, **kw: Any) -> Any:
        if "mount" in argv and "create" not in argv:  # the retry: the moment has passed
            (blocker / "someone-elses.txt").unlink(missing_ok=True)
            result = execute(argv, **kw)
            mounts.append(result.ok)
            return result
        return execute(argv, **kw)

    monkeypatch.setattr(dst, "execute", freed_before_the_retry)
    result = doctor._destination_write()
    assert result.error is None and isinstance(result.rate, float), result
    assert mounts == [True]
    assert TEMP_PREFIX not in zfs("list", "-H", "-o", "name", "-r", dst_pool.name)


def test_write_test_datasets_an_earlier_run_left_are_named_then_destroyed(
        lab_hosts: tuple[Host, Host], pools: tuple[Pool, Pool],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A run killed before its clean-up leaves its write test's dataset (up to 16 GiB). The
    next run under the same parent finds it (its name, its age): named in the doctor's list,
    it is destroyed with the run's own; not named (a face that did not show it), it is left
    and the advice says so with the command. Nothing else is touched: a dataset that only
    looks like one (another name, another level) stays."""
    src, dst = lab_hosts
    _, pool = pools
    old = f"{pool.name}/{TEMP_PREFIX}0badcafe"
    alike = [f"{pool.name}/{TEMP_PREFIX}mine", f"{pool.name}/keep",
             f"{pool.name}/keep/{TEMP_PREFIX}0badf00d"]
    for name in (old, *alike):
        zfs("create", name)
    write_random_files(pool.mountpoint / old.split("/", 1)[1], 2, files=1)
    # Made just now: no run lasts an hour, so only an older one counts; here, any age does.
    monkeypatch.setattr(temp_dataset, "STALE_AFTER", 0.0)

    def doctor() -> Doctor:
        d = Doctor(src, dst, snapshot=None, parent=pool.name, seconds=1, options=Options(),
                   stages=["destination_write"])
        choose_parent(d)
        return d

    shy = doctor()
    assert [lo.name for lo in shy.leftovers or []] == [old]
    report = shy.run()  # its list never shown: the leftover stays, named with its command
    (advice,) = [a for a in report.advice if a.kind is AdviceKind.LEFTOVER_DATASET]
    assert advice.word("dataset") == old and advice.word("host") == dst.label
    assert f"destroy it there with zfs destroy -r {old}" in plain_words.advice(advice)
    assert old in temp_datasets(pool)

    shown = doctor()
    lost = write_test_losses(shown)
    assert [x.name for x in lost] == [shown.temp_dataset, old]
    assert "left by an earlier doctor run" in lost[1].detail
    shown.clear_leftovers = frozenset(x.name for x in lost)  # what the command line does
    report = shown.run()
    assert not [a for a in report.advice if a.kind is AdviceKind.LEFTOVER_DATASET]
    names = zfs("list", "-H", "-o", "name", "-r", pool.name).split()
    assert old not in names and shown.temp_dataset not in names
    assert all(n in names for n in alike), names


def test_the_tls_stage_takes_back_keys_one_host_got_when_the_other_refused_them(
        lab_hosts: tuple[Host, Host], monkeypatch: pytest.MonkeyPatch) -> None:
    """The private stage's keys go to both hosts at once: where the destination's hand-over
    fails (its key directory's name is taken), the source's are removed all the same, and
    what held the name there is left alone."""
    from zmigrate.engine.hosts import key_dirs
    from zmigrate.engine.transports import Transport

    src, dst = lab_hosts
    token = secrets.token_hex(12)
    dirs = (f"/tmp/{key_dirs.KEY_PREFIX}{token}-s", f"/tmp/{key_dirs.KEY_PREFIX}{token}-d")
    taken = Path(dirs[1])
    taken.write_text("someone else's\n")
    monkeypatch.setattr(key_dirs, "key_dirs", lambda: dirs)
    try:
        doctor = Doctor(src, dst, seconds=1, stages=("tls",),
                        options=Options(transport=Transport.PRIVATE))
        report = doctor.run()
        (tls,) = report.stages
        assert tls.name == "tls" and tls.rate is None, tls
        assert tls.error is not None and "handing over" in tls.error, tls.error
        assert not Path(dirs[0]).exists(), "the source kept its private key"
        assert taken.read_text() == "someone else's\n"
    finally:
        taken.unlink()
