"""Every event kind goes to JSON and comes back equal: the record a job's events are kept in."""

from __future__ import annotations

import json
import typing

import pytest
from wire_samples import shaped

from zmigrate.cli.common import event_to_json
from zmigrate.engine.errors import (
    CancelledError,
    CommandError,
    PreflightError,
    PreflightReason,
    TransferError,
    ZmigrateError,
)
from zmigrate.engine.event_json import KINDS, EventJsonError, from_json, to_json
from zmigrate.engine.events import (
    Bottleneck,
    DatasetState,
    EndCpu,
    Event,
    Failed,
    Finished,
    HostCpu,
    LogLine,
    OutOfTouch,
    PlanReady,
    ProcessCpu,
    Progress,
    Resent,
    Sample,
    Side,
    StageChanged,
    StageResult,
    StageStarted,
    Stalled,
    Summary,
    Synced,
    TreePlanReady,
    Verdict,
)
from zmigrate.engine.findings import Advice, AdviceKind, Finding, FindingKind, Note, NoteKind
from zmigrate.engine.losses import DESTINATION, Loss, LossKind
from zmigrate.engine.plan import Options, PartialReceiveError, Plan, Step
from zmigrate.engine.remedies import Caveat, Remedy
from zmigrate.engine.transports import Compression, Transport
from zmigrate.engine.transports.route import Endpoint, SshRoute
from zmigrate.engine.tree.planning.entry import TreeEntry
from zmigrate.engine.tree.planning.plan import NotCarried, TreePlan


def _plan() -> Plan:
    """A plan with every nested kind filled: options with a route, steps, Optional fields."""
    options = Options(transport=Transport.SSH, port=None, rate_limit=50_000_000, base="s0",
                      ssh_options=("-oCiphers=aes128-gcm@openssh.com",),
                      ssh_route=SshRoute(Endpoint("root", "dst.example", 2222),
                                         (Endpoint("jump", "bastion", 22),), ("-oA=b",), True),
                      properties=(("compression", "zstd"), ("atime", "off")),
                      exclude_properties=("mountpoint",), raw=None, stall_timeout=600.0,
                      compress=Compression.ZSTD)
    steps = (Step(None, "tank/d@s0", ("s0",), 4096, "zfs send tank/d@s0", "zfs receive b/d"),
             Step("tank/d@s0", "tank/d@s1", ("s1",), None, "zfs send -i @s0 tank/d@s1", None,
                  receive_mark="zmigrate-receive-0123456789ab", resume_token="1-abc"))
    return Plan("lab-src", "lab-dst", "tank/d@s1", "b/d", "incremental", "s0", Transport.SSH,
                options, steps, None, 2**30, 2**30, 8192, False,
                destroys=(Loss(DESTINATION, LossKind.SNAPSHOT, "b/d@s9", "newer than @s0"),),
                seen=("b/d", "b/d@s0", "b/d@s9"), force_receive=True,
                warnings=("a warning", Caveat("open", (Remedy.OPEN_LISTENER,), {"port": "9"})),
                job_id="cafe0001", send_flags=("-w", "-c"),
                compress="zstd")


def _tree_plan() -> TreePlan:
    entries = (TreeEntry("tank/t", "bk/t", "filesystem", 100, "full"),
               TreeEntry("tank/t/a", "bk/t/a", "volume", 0, "skip", reason="unchanged",
                         carried_by="tank/t", origin="tank/t@o", base="s2", size_known=False))
    return TreePlan("src", "dst", "tank/t", "bk/t", "s3", "zfs snapshot -r tank/t@s3", None,
                    entries, ("bk/t/gone",), ("tank/t/x",), "unmounted", "ssh",
                    NotCarried(1, 2, 3), measures_empty=True)


def _verdict() -> Verdict:
    return Verdict(Bottleneck.DESTINATION, Finding(FindingKind.RECEIVE_FULL, {"fill": 98.5,
                                                                               "rate": 12_000}),
                   (Advice(AdviceKind.CPU_BOUND, {"process": "zfs", "cpu": 99.0, "host": "lab-dst",
                                                  "stage": "receive"}),),
                   {"fill": 98.5}, 0.75, True, 31.5, "tank/t/a")


def _stage_result() -> StageResult:
    cpu = HostCpu("lab-src", 42.0, 4, (ProcessCpu("lab-src", 123, "mbuffer", 95.5),), ("steal",))
    return StageResult("network", "the network", 1.5e8, 5.0, 750_000_000, True, (cpu,),
                       (Note(NoteKind.RAN_TO_END, {"bytes": 750_000_000}),), None, False,
                       {"port": 9090, "commands": [{"host": "lab-src", "command": "mbuffer"}]})


EXAMPLES: list[Event] = [
    PlanReady(_plan()),
    TreePlanReady(_tree_plan()),
    StageChanged("verifying", "comparing snapshot guids", "tank/t/a"),
    Sample(1.5, Side.RECEIVE, 1e8, 9.5e7, 123456, 87.5, "tank/t"),
    LogLine("lab-dst", Side.SEND, "cannot receive: oops"),
    Progress(3.0, 2**20, None, 0, None, 2, 3, 1.25e6, 12.0),
    Stalled(9.0, "destination", "lab-dst", 30.0, {"state": "disk", "answers": 1}, True, "tank/t"),
    DatasetState("tank/t/a", "bk/t/a", "verified", 1, 2, 4096, 4096, 1e6, "guid 1"),
    _verdict(),
    Finished(Summary(2**30, 10.5, 1.0e8, None, 11, 11, True, ("s0", "s1"),
                     {"verdict": {"kind": "none"}, "remote_commands": {"source": 3}})),
    Failed(PreflightError("no room", host="lab-dst", fix="free some space",
                          reason=PreflightReason.NO_SPACE)),
    StageStarted("network", "the network", 5.0),
    _stage_result(),
    shaped(),
    Synced(3, False, 2**20, 4.5, "zmigrate-20261127-020000", "stalled", "resume",
           12.5, 4096, 900.0),
    EndCpu(12.5, Side.RECEIVE, "lab-dst", "socat", 0.97, 0.012, 5.02, "tank/t"),
    Resent(17.5, "lab-src", "Linux", 120_000, 3_600, 5.01, "tank/t"),
    StageChanged("preflight", "dst: open: give it with --allow-address", "tank/t/a",
                 Caveat("dst: open", (Remedy.OPEN_LISTENER,))),
    OutOfTouch("nas", 1.8e9, "cannot log in to the runner host nas: timed out", 10.0),
]


def _round_trip(event: Event) -> Event:
    return from_json(json.loads(json.dumps(to_json(event))))


def test_every_kind_in_the_union_has_an_example_and_a_name() -> None:
    kinds = set(typing.get_args(Event))
    assert {type(e) for e in EXAMPLES} == kinds, "add an example of each new kind to EXAMPLES"
    assert set(KINDS) == kinds
    assert len(set(KINDS.values())) == len(KINDS)


@pytest.mark.parametrize("event", EXAMPLES, ids=lambda e: type(e).__name__)
def test_each_kind_comes_back_equal(event: Event) -> None:
    back = _round_trip(event)
    assert back == event
    assert type(back) is type(event)


def test_the_record_names_its_kind_and_carries_every_field() -> None:
    data = to_json(EXAMPLES[0])
    assert data["kind"] == "plan"
    plan = data["data"]["plan"]
    assert plan["options"]["ssh_route"]["jumps"][0]["host"] == "bastion"
    assert plan["steps"][1]["resume_token"] == "1-abc"
    assert plan["transport"] == "ssh"
    assert to_json(EXAMPLES[8])["data"]["kind"] == "destination"  # the verdict's own kind


def test_values_keep_their_types() -> None:
    progress = _round_trip(Progress(3.0, 5, 10, 2.5, 1.5))
    assert isinstance(progress, Progress)
    assert isinstance(progress.total, int) and isinstance(progress.eta, float)
    plan = _round_trip(EXAMPLES[0])
    assert isinstance(plan, PlanReady)
    assert plan.plan.options.properties == (("compression", "zstd"), ("atime", "off"))
    assert plan.plan.options.compress is Compression.ZSTD
    assert plan.plan.commands() == _plan().commands()


@pytest.mark.parametrize("error", [
    ZmigrateError("internal error: boom"),
    CancelledError("cancelled", host="lab-src"),
    CommandError("zfs failed", host="lab-dst", command="zfs list", status=1, stderr="no"),
    PartialReceiveError("partial", host="lab-dst", fix="--resume", dataset="b/d", token="1-x"),
    TransferError("refused", host="lab-dst", fix="said", remedies=(Remedy.ALLOW_ADDRESS,),
                  figures={"address": "192.0.2.9"}),
], ids=lambda e: type(e).__name__)
def test_an_error_comes_back_as_its_class_with_its_attributes(error: ZmigrateError) -> None:
    back = _round_trip(Failed(error, cancelled=isinstance(error, CancelledError)))
    assert isinstance(back, Failed)
    assert back == Failed(error, cancelled=isinstance(error, CancelledError))
    assert type(back.error) is type(error)
    assert str(back.error) == str(error)
    assert back != Failed(ZmigrateError("another"))


def test_an_older_records_error_reads_its_fix_as_words_for_every_face() -> None:
    """A record written before remedies: the error's `fix` attribute, no remedies, no figures."""
    old = {"kind": "failed", "data": {"error": {"type": "TransferError", "attributes": {
        "message": "cut off", "host": "lab-dst", "fix": "run it again"}}, "cancelled": False}}
    back = from_json(old)
    assert isinstance(back, Failed)
    assert (back.error.fix, back.error.said_fix, back.error.remedies, back.error.figures) == \
        ("run it again", "run it again", (), {})


def test_what_is_not_an_event_record_is_refused() -> None:
    with pytest.raises(EventJsonError):
        from_json({"kind": "telegram", "data": {}})
    with pytest.raises(EventJsonError):
        from_json({"kind": "progress", "data": {"elapsed": "soon"}})


def test_the_clis_plan_line_is_the_plans_own_json() -> None:
    """Plan.to_json lives beside the Plan; the CLI's --json `plan` event adds only its name."""
    plan = _plan()
    line = event_to_json(PlanReady(plan))
    assert line == {"event": "plan", **plan.to_json()}
    assert list(line)[:6] == ["event", "source", "destination", "snapshot",
                              "destination_dataset", "kind"]
    assert line["commands"] == [{"host": h, "command": c} for h, c in plan.commands()]
    assert line["description"] == plan.describe()


def test_a_field_of_the_wrong_type_is_refused() -> None:
    data = json.loads(json.dumps(to_json(LogLine("lab-dst", Side.SEND, "text"))))
    data["data"]["host"] = 7
    with pytest.raises(EventJsonError):
        from_json(data)
    data = to_json(Progress(1.0, 5, None, 0.0, None))
    data["data"]["done"] = True
    with pytest.raises(EventJsonError):
        from_json(data)
