"""The runner on another host (issue 31, "where the runner runs"): the starter, a computer in
a network namespace of its own, starts `send --detach --runner lab-runner` and then loses its
network for CUT seconds mid-transfer; the transfer goes on on lab-runner and completes, the
starter's `attach` says it is out of touch meanwhile and then follows the job to its end, and
`attach` from the starter afterwards shows all of it, its samples covering the cut without a
gap. The follower both faces use (engine/runner/through_losses), its session dropped and the
runner host deaf for a while, logs in again by itself and misses no event. A runner host
without zmigrate, or one that cannot log in to the lab's hosts, is refused before anything
moves, with the fix. `stop` from the starter stops a remote job there.

Figures: 40 MiB at --bwlimit 256k (about 160 s of transfer); the starter is cut off for
CUT = 120 s of it (the issue's two minutes), from about 12 s in: the transfer still runs for
some 25 s after the link is back, so the cut falls wholly mid-transfer."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lab.bring_up import running
from lab.prompts import PASSPHRASE, Answers, locked_key
from lab.sshd import Lab
from lab.starter import StarterLab
from lab.util import Run, dataset_exists, snapshot_guid, wait_until, write_random_files, zfs
from lab.zfsfuse import Pool

from zmigrate.engine.events import OutOfTouch, Sample
from zmigrate.engine.hosts.remembered import SessionLogins
from zmigrate.engine.runner import read_events
from zmigrate.engine.runner.remote import Pointer, RemoteRunner
from zmigrate.engine.runner.through_losses import FollowingThroughLosses

pytestmark = [pytest.mark.lab, pytest.mark.timeout(420)]

CUT = 120.0
DATA_MB = 40
RATE_KIB = 256
RATE = f"{RATE_KIB}k"  # --bwlimit: KiB/s
# mbuffer says its status every second; a few intervals on a loaded two-core machine.
MAX_GAP = 4.0


@pytest.fixture
def starter(lab: Lab, tmp_path: Path) -> Iterator[StarterLab]:
    with running(StarterLab(tmp_path / "starter", lab)) as s:
        yield s


@pytest.fixture
def dataset(pools: tuple[Pool, Pool]) -> tuple[Pool, Pool, str]:
    src, dst = pools
    zfs("create", f"{src.name}/d")
    write_random_files(src.mountpoint / "d", DATA_MB, files=4)
    zfs("snapshot", f"{src.name}/d@s1")
    return src, dst, f"{src.name}/d@s1"


def _send(starter: StarterLab, snap: str, copy: str, runner: str, rate: str = RATE) -> Run:
    return starter.zmigrate("send", f"lab-src:{snap}", f"lab-dst:{copy}", "--detach",
                            "--runner", runner, "--json", "--bwlimit", rate, "--buffer", "8M",
                            timeout=120)


def _job(starter: StarterLab, job_id: str) -> dict[str, Any]:
    r = starter.zmigrate("jobs", "--json", timeout=120)
    assert r.returncode == 0, r.stderr
    return next(j for j in r.of("job") if j["id"] == job_id)


def _gaps(ats: list[float]) -> list[float]:
    return [b - a for a, b in zip(ats, ats[1:], strict=False)]


def test_the_job_runs_on_while_its_starter_is_cut_off_and_attach_shows_all_of_it(
        starter: StarterLab, dataset: tuple[Pool, Pool, str]) -> None:
    src, dst, snap = dataset
    copy = f"{dst.name}/copy"
    r = _send(starter, snap, copy, "lab-runner")
    assert r.returncode == 0, r.stderr + r.stdout
    (said,) = r.of("runner")  # the plan's word on the runner's own logins
    assert said["zmigrate"].endswith("/zmigrate")
    assert [x["host"] for x in said["reach"]] == ["lab-src", "lab-dst"]
    assert all(x["ok"] and x["ssh_config"] == str(starter.lab.ssh_config)
               and str(starter.lab.identity) in x["identities"] for x in said["reach"])
    (job,) = r.of("job")
    job_id = job["id"]
    assert job["runner"] == "lab-runner"
    assert (starter.runner_jobs / job_id / "state.json").is_file()  # the record is there
    assert not (starter.starter_jobs / job_id).exists()  # here only the pointer
    assert json.loads((starter.starter_jobs / "remote" / f"{job_id}.json").read_text())[
        "runner"] == "lab-runner"

    assert wait_until(lambda: _job(starter, job_id)["done"] > 2 * 1024 * 1024, 120, 1)
    follower = starter.popen("attach", job_id)  # following when the network goes
    said: list[str] = []
    assert follower.stderr is not None
    reader = threading.Thread(target=lambda: said.extend(follower.stderr or ()), daemon=True)
    reader.start()
    time.sleep(3)
    assert follower.poll() is None
    starter.cut()
    cut_at = time.time()
    try:
        # It learns within LOST_AFTER (15 s) and a few keepalives that the runner is out of
        # reach, says the job goes on there, and keeps trying.
        assert wait_until(lambda: any(x.startswith("Out of touch with lab-runner for ")
                                      for x in said), 40, 0.5), said
        assert follower.poll() is None
        lost = starter.zmigrate("jobs", "--json", timeout=120)
        (unreachable,) = [j for j in lost.of("job") if j["id"] == job_id]
        assert unreachable["state"] == "unreachable", unreachable
        assert "lab-runner" in unreachable["error"]
        time.sleep(max(0.0, CUT - (time.time() - cut_at)))
    finally:
        starter.back()
    back_at = time.time()
    seen = _job(starter, job_id)
    assert seen["state"] == "running", seen  # it outlasted the cut: the cut fell mid-transfer
    try:
        # Back in touch by itself, it shows the rest of the job, each event once, to its end.
        follower.wait(timeout=300)
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait()
    reader.join(timeout=10)
    assert follower.stdout is not None
    out = follower.stdout.read()
    assert follower.returncode == 0 and f"{job_id}  finished" in out, (out, said)
    tries = [x for x in said if "(cannot log in to the runner host lab-runner" in x]
    assert tries and any(x.startswith("Back in touch with lab-runner after ") for x in said), said
    print("\nattach meanwhile: " + " | ".join(x.strip() for x in said if "touch with" in x))

    end = starter.zmigrate("attach", job_id, "--json", timeout=300)
    assert end.returncode == 0, end.stderr + end.stdout
    final = end.events[-1]
    assert final["event"] == "job" and final["state"] == "finished", final
    assert final["outcome"]["ok"] is True and final["done"] >= DATA_MB * 1024 * 1024
    assert snapshot_guid(f"{copy}@s1") == snapshot_guid(snap)

    # attach shows the job from its first event: the plan, samples all along, the end.
    kinds = [e["event"] for e in end.events]
    assert kinds[0] in ("plan", "stage") and "plan" in kinds and kinds[-2] == "done"
    sample_ts = [e["t"] for e in end.events if e["event"] == "sample" and e["side"] == "send"]
    assert len(sample_ts) > 60 and max(_gaps(sample_ts)) < MAX_GAP, sorted(_gaps(sample_ts))[-3:]
    # The same samples in lab-runner's record, by the clock: they cover the cut.
    recorded = [x for x in read_events(starter.runner_jobs / job_id)
                if isinstance(x.event, Sample) and x.event.side.value == "send"]
    during = [x for x in recorded if cut_at <= x.at <= back_at]
    assert len(during) >= CUT * 0.8, len(during)
    assert max(_gaps([cut_at, *(x.at for x in during), back_at])) < MAX_GAP
    # ... and the bytes moved all along: at least half the limit's rate across the cut.
    assert isinstance(during[0].event, Sample) and isinstance(during[-1].event, Sample)
    moved = during[-1].event.total - during[0].event.total
    assert moved >= 0.5 * RATE_KIB * 1024 * (during[-1].at - during[0].at), moved
    assert len(recorded) == len(sample_ts)
    print(f"remote runner: cut {CUT:.0f} s of a {final['elapsed']:.0f} s transfer; "
          f"{len(sample_ts)} send samples, {len(during)} while cut off ({moved / 2**20:.1f} "
          f"MiB moved meanwhile), largest gap {max(_gaps(sample_ts)):.2f} s")
    again = starter.zmigrate("attach", job_id, timeout=120)  # the plain follower: its end
    assert again.returncode == 0 and f"{job_id}  finished" in again.stdout, again.stdout


def test_a_runner_host_without_zmigrate_is_refused_before_anything_moves(
        starter: StarterLab, dataset: tuple[Pool, Pool, str]) -> None:
    src, dst, snap = dataset
    r = _send(starter, snap, f"{dst.name}/copy", "lab-runner-bare")
    assert r.returncode != 0
    (err,) = r.of("error")
    assert err["message"].startswith("zmigrate is not installed on lab-runner-bare"), err
    assert "pipx install zmigrate" in err["fix"]
    plain = starter.zmigrate("send", f"lab-src:{snap}", f"lab-dst:{dst.name}/copy",
                             "--detach", "--runner", "lab-runner-bare", timeout=120)
    assert plain.returncode != 0
    assert "zmigrate is not installed on lab-runner-bare" in plain.stderr
    assert "fix: install the command line there: `pipx install zmigrate`" in plain.stderr
    assert not dataset_exists(f"{dst.name}/copy")
    assert not (starter.starter_jobs / "remote").exists()
    assert not starter.runner_jobs.exists()


def test_a_runner_host_that_cannot_log_in_to_a_host_is_refused_with_the_fix(
        starter: StarterLab, dataset: tuple[Pool, Pool, str]) -> None:
    src, dst, snap = dataset
    r = _send(starter, snap, f"{dst.name}/copy", "lab-runner-lost")
    assert r.returncode != 0
    (said,) = r.of("runner")
    assert [x["ok"] for x in said["reach"]] == [False, False]
    (err,) = r.of("error")
    assert err["message"].startswith("lab-runner-lost cannot log in to lab-src: "), err
    assert "make `ssh lab-src` work on lab-runner-lost" in err["fix"]
    assert not dataset_exists(f"{dst.name}/copy")
    assert not starter.runner_jobs.exists()


def test_stop_from_the_starter_stops_the_job_on_its_runner(
        starter: StarterLab, dataset: tuple[Pool, Pool, str]) -> None:
    src, dst, snap = dataset
    r = starter.zmigrate("send", f"lab-src:{snap}", f"lab-dst:{dst.name}/copy", "--detach",
                         "--runner", "lab-runner", "--bwlimit", "200k", timeout=120)
    assert r.returncode == 0, r.stderr + r.stdout
    said = r.stdout.splitlines()  # the plan's word on the runner, then the job
    assert said[0].startswith("runner lab-runner: /") and said[0].endswith("/zmigrate"), said
    assert said[1].startswith("  logs in to lab-src as root@127.0.0.1:"), said
    assert f"with {starter.lab.identity} (its ssh config: {starter.lab.ssh_config})" in said[1]
    assert said[2].startswith("  logs in to lab-dst as root@127.0.0.1:"), said
    assert said[3].startswith("started job ") and " on lab-runner: " in said[3], said
    job = {"id": said[3].split()[2]}
    assert wait_until(lambda: _job(starter, job["id"])["state"] == "running", 60, 1)
    text = starter.zmigrate("jobs", timeout=60).stdout
    assert f"{job['id']}  running" in text and "[runner lab-runner]" in text, text
    listed = starter.zmigrate("jobs", "--runner", "lab-runner", "--json", timeout=60)
    assert [j["id"] for j in listed.of("job")] == [job["id"]]
    stopped = starter.zmigrate("stop", job["id"], timeout=300)
    assert stopped.returncode == 0, stopped.stderr + stopped.stdout
    assert "stopped" in stopped.stdout
    assert _job(starter, job["id"])["state"] == "stopped"


@pytest.fixture
def locked_key_config(starter: StarterLab, tmp_path: Path) -> Iterator[Path]:
    """The starter's ssh config with a passphrase on its key (authorized on the runner
    hosts until the test ends)."""
    authorized = starter.lab.identity.parent / "authorized_keys"
    with locked_key(tmp_path / "id_locked", authorized) as key:
        config = tmp_path / "ssh_config_locked"
        config.write_text(starter.ssh_config.read_text().replace(
            f"IdentityFile {starter.lab.identity}\n", f"IdentityFile {key}\n"))
        yield config


def test_a_follower_that_loses_the_runner_host_logs_in_again_and_misses_nothing(
        starter: StarterLab, dataset: tuple[Pool, Pool, str],
        monkeypatch: pytest.MonkeyPatch, locked_key_config: Path) -> None:
    """The window's follower (engine/runner/through_losses): its session to lab-runner is
    dropped mid-transfer and lab-runner answers no login for a while (its sshd stopped):
    the follower says it is out of touch, with each failed try's reason, logs in again once
    lab-runner answers, says so, and gives every event of the job's record once, in order,
    to the end, reading there only what it missed. Its key to lab-runner has a passphrase:
    asked at the first login only."""
    src, dst, snap = dataset
    r = _send(starter, snap, f"{dst.name}/copy", "lab-runner", rate="1m")
    assert r.returncode == 0, r.stderr + r.stdout
    (job,) = r.of("job")
    pointer = Pointer.from_json(json.loads(
        (starter.starter_jobs / "remote" / f"{job['id']}.json").read_text()))
    monkeypatch.setenv("ZMIGRATE_SSH_CONFIG", str(locked_key_config))
    monkeypatch.setenv("ZMIGRATE_KNOWN_HOSTS", str(starter.known_hosts))
    touch: list[OutOfTouch] = []
    seqs: list[int] = []
    prompts = Answers(PASSPHRASE)
    following = FollowingThroughLosses(pointer, touch.append, SessionLogins(prompts))
    streams: list[list[Any]] = []  # each `attach --record` there: its arguments, lines read
    real_stream = RemoteRunner.stream

    def counted(rr: RemoteRunner, *args: str) -> Iterator[str]:
        streams.append(entry := [args, 0])
        for line in real_stream(rr, *args):
            entry[1] += 1
            yield line

    monkeypatch.setattr(RemoteRunner, "stream", counted)
    errors: list[BaseException] = []

    def follow() -> None:
        try:
            seqs.extend(rec.seq for rec in following.records())
        except BaseException as exc:  # noqa: BLE001 - the test reads it
            errors.append(exc)

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    assert wait_until(lambda: len(seqs) > 10, 60, 0.2), (seqs, errors)
    with starter.deaf("lab-runner"):
        assert wait_until(lambda: len(touch) >= 2, 60, 0.2), touch
    thread.join(timeout=240)
    assert not thread.is_alive() and not errors, errors
    lost, failed = touch[0], touch[1]
    assert not lost.back and lost.runner == "lab-runner" and lost.reason == ""
    assert not failed.back and failed.since == lost.since
    assert "cannot log in to the runner host lab-runner" in failed.reason, failed
    assert failed.retry_in > lost.retry_in
    assert touch[-1].back and touch[-1].since == lost.since
    assert following.status is not None and following.status.state.value == "finished"
    recorded = [x.seq for x in read_events(starter.runner_jobs / job["id"])]
    assert seqs == sorted(set(seqs)) and seqs == recorded, (seqs, recorded)
    assert snapshot_guid(f"{dst.name}/copy@s1") == snapshot_guid(snap)
    assert len(prompts.asked) == 1 and "Passphrase" in prompts.asked[0], prompts.asked
    # Each login after the loss read only what came after the last event given: nothing
    # of the record twice (at most one status line more per login).
    assert "--after" not in streams[0][0] and len(streams) >= 2, streams
    assert all(args[-2] == "--after" and int(args[-1]) > 0 for args, _ in streams[1:]), streams
    assert sum(n for _, n in streams) <= len(recorded) + len(streams), (streams, len(recorded))
    print(f"follower: {len(seqs)} events once each; " + "; ".join(
        f"{t.back and 'back' or 'lost'} {t.retry_in:g} s {t.reason}" for t in touch))
