"""What sending one snapshot into a destination would do, decided from both inventories (no
I/O): the Destination page words it as the user types a name.

The transport's address and port are chosen later (the Transport page); what the destination
would do does not depend on them, so the planner is given stand-ins for a carrier that listens.
The plans here carry every decision (kind, base, snapshots, what is destroyed, the estimate);
their commands are not the ones that will run (the job plans again with the real address)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ..destination import Emptiness
from ..errors import PreflightError, PreflightReason
from ..plan import Options, Plan, Site, make_plan
from ..transports import Transport
from ..zfs import ResumeInfo

_STAND_IN_ADDRESS, _STAND_IN_PORT = "127.0.0.1", 1  # never used: the job plans again

# Refusals about what the destination already holds (not about the hosts or the options).
CONFLICTS = frozenset({PreflightReason.NOT_EMPTY, PreflightReason.ALREADY_THERE,
                       PreflightReason.NO_COMMON_SNAPSHOT, PreflightReason.DIVERGED})
# Of those, the ones --force resolves (rolls back, or replaces a dataset's whole content).
FORCEABLE = frozenset({PreflightReason.DIVERGED, PreflightReason.NOT_EMPTY})


class Outcome(Enum):
    """What sending there would do."""

    NEW = "new"  # a full copy creates it (or fills the empty dataset there)
    INCREMENTAL = "incremental"  # from the newest common snapshot
    CONFLICT = "conflict"  # refused over what the destination holds (CONFLICTS)
    REFUSED = "refused"  # refused for another reason: hosts, tools, names


@dataclass(frozen=True, slots=True)
class Outlook:
    """The outcome, its plan (NEW, INCREMENTAL), the refusal (CONFLICT, REFUSED) and, where
    --force would resolve the conflict, the plan forced (`forced`)."""

    outcome: Outcome
    plan: Plan | None = None
    refusal: PreflightError | None = None
    forced: Plan | None = None


@dataclass(frozen=True, slots=True)
class PartialWays:
    """An interrupted receive in the destination and the two ways on: each one's plan, or the
    refusal that rules it out. `changed`: the token read is not the one the inventory shows
    (read again before choosing); `keeps_snapshots`: the destination has snapshots that
    discarding leaves in place."""

    changed: bool
    keeps_snapshots: bool
    resume: Plan | None = None
    resume_refused: PreflightError | None = None
    discard: Plan | None = None
    discard_refused: PreflightError | None = None


def _plan(src: Site, dst: Site, snapshot: str, destination: str, options: Options, *,
          resume_info: ResumeInfo | None = None, emptiness: Emptiness | None = None) -> Plan:
    return make_plan(src, dst, snapshot, destination, options, connect_address=_STAND_IN_ADDRESS,
                     port=_STAND_IN_PORT, resume_info=resume_info, emptiness=emptiness)


def destination_outlook(src: Site, dst: Site, snapshot: str, destination: str,
                        transport: Transport, *,
                        emptiness: Emptiness | None = None) -> Outlook:
    """What sending `snapshot` into `destination` would do, by make_plan's own rules."""
    options = Options(transport=transport)
    try:
        plan = _plan(src, dst, snapshot, destination, options, emptiness=emptiness)
    except PreflightError as exc:
        if exc.reason not in CONFLICTS:
            return Outlook(Outcome.REFUSED, refusal=exc)
        forced = None
        if exc.reason in FORCEABLE:
            try:
                forced = _plan(src, dst, snapshot, destination,
                               Options(transport=transport, force=True), emptiness=emptiness)
            except PreflightError:
                forced = None
        return Outlook(Outcome.CONFLICT, refusal=exc, forced=forced)
    return Outlook(Outcome.NEW if plan.kind == "full" else Outcome.INCREMENTAL, plan)


def partial_ways(src: Site, dst: Site, snapshot: str, destination: str, transport: Transport,
                 info: ResumeInfo | None) -> PartialWays:
    """Resume or discard the interrupted receive in `destination`; `info` is its decoded
    token (None: it could not be read, so only discarding is planned)."""
    there = dst.find(destination)
    changed = info is not None and (there is None or there.resume_token != info.token)
    keeps = there is not None and bool(there.snapshots)
    if changed:
        return PartialWays(changed, keeps)
    ways: dict[str, Plan | PreflightError | None] = {}
    for way in ("resume", "discard") if info is not None else ("discard",):
        options = Options(transport=transport, resume=way == "resume",
                          discard_partial=way == "discard")
        try:
            ways[way] = _plan(src, dst, snapshot, destination, options, resume_info=info)
        except PreflightError as exc:
            ways[way] = exc
    resume, discard = ways.get("resume"), ways.get("discard")
    return PartialWays(
        changed, keeps,
        resume if isinstance(resume, Plan) else None,
        resume if isinstance(resume, PreflightError) else None,
        discard if isinstance(discard, Plan) else None,
        discard if isinstance(discard, PreflightError) else None)
