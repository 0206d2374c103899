"""Any engine event to JSON and back, exactly: `from_json(to_json(e)) == e` for every kind.

The form is `{"kind": <the kind's name>, "data": {<every field>}}`: the fields nest as the
dataclasses do (a plan's options and steps, a verdict's finding), enums as their values,
tuples as lists, an error as its class name and attributes. Decoding follows the fields' type
hints, so a field added to a kind travels without a line here; a kind added to the union needs
its name in `KINDS` (tests/unit/test_event_json.py says so). This is the record a job's events
are written to and read back from; the CLI's --json lines are a view of their own (cli/common).

It sits beside events.py, not in it: reading a tree's plan back needs the TreePlan class, whose
package imports events.py.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Mapping
from enum import Enum
from typing import Any, Final, Union

from . import errors
from . import events as ev
from .errors import PreflightReason, ZmigrateError
from .events import Event
from .golive.checks import NotReadyError
from .golive.cutover import GoLiveError
from .history.store import HistoryError
from .plan import PartialReceiveError, Plan
from .remedies import Remedy
from .tree.planning.plan import TreePlan

# The kinds' names in the record: stable (a renamed class keeps its name here).
KINDS: Final[dict[type[Event], str]] = {
    ev.PlanReady: "plan", ev.TreePlanReady: "tree_plan", ev.StageChanged: "stage",
    ev.Sample: "sample", ev.LogLine: "log", ev.Progress: "progress", ev.Stalled: "stalled",
    ev.DatasetState: "dataset", ev.Verdict: "verdict", ev.Finished: "done", ev.Failed: "failed",
    ev.StageStarted: "doctor_stage_started", ev.StageResult: "doctor_stage", ev.Wire: "wire",
    ev.Synced: "synced", ev.EndCpu: "end_cpu", ev.Resent: "resent",
    ev.OutOfTouch: "out_of_touch",
}
_BY_NAME: Final = {name: kind for kind, name in KINDS.items()}
# Every error class an event may carry, by name (a later one unknown here reads as its base).
_ERRORS: Final[dict[str, type[ZmigrateError]]] = {
    cls.__name__: cls for cls in (
        ZmigrateError, errors.InvalidNameError, errors.ConnectError, errors.AuthError,
        errors.HostKeyError, errors.CommandError, errors.PreflightError, errors.TransferError,
        errors.PortInUseError, errors.CancelledError, PartialReceiveError, HistoryError,
        GoLiveError, NotReadyError)
}
# Names the kinds' annotations use that their own modules import only for type checking.
_NAMES: Final[dict[str, object]] = {"Plan": Plan}
# What a field typed by what it offers is read back as.
_CONCRETE: Final[dict[object, type]] = {ev.TreePlanFacts: TreePlan}
# The JSON values each plain type reads from (a float field may hold an int: 0 for 0.0).
_PLAIN: Final[dict[object, tuple[type, ...]]] = {int: (int,), float: (int, float), str: (str,),
                                                 bool: (bool,)}


class EventJsonError(ZmigrateError):
    """A record that is not an event this version reads."""


def to_json(event: Event) -> dict[str, Any]:
    """The event as JSON-ready data: `{"kind": ..., "data": {...}}`."""
    return {"kind": KINDS[type(event)], "data": _encode(event)}


def from_json(data: object) -> Event:
    """The event `to_json` made (after a trip through `json.dumps`/`json.loads`)."""
    if not isinstance(data, dict) or data.get("kind") not in _BY_NAME:
        raise EventJsonError(f"not an event record: {str(data)[:80]}",
                             fix="read it with the zmigrate version that wrote it")
    kind = _BY_NAME[data["kind"]]
    try:
        event = _decode(data.get("data"), kind)
    except (KeyError, TypeError, ValueError) as exc:
        raise EventJsonError(f"a {data['kind']} record does not read: {exc}",
                             fix="read it with the zmigrate version that wrote it") from None
    assert isinstance(event, kind)
    return event


# -- writing --------------------------------------------------------------------------------------
def _encode(value: object) -> object:
    if isinstance(value, Enum):
        return _encode(value.value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, ZmigrateError):
        return {"type": type(value).__name__,
                "attributes": {k: _encode(v) for k, v in vars(value).items()}}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _encode(v) for k, v in value.items()}
    if isinstance(value, (tuple, list, set, frozenset)):
        return [_encode(v) for v in value]
    raise TypeError(f"{type(value).__name__} does not go into an event record")


# -- reading --------------------------------------------------------------------------------------
@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, localns=_NAMES)


def _decode(data: object, hint: Any) -> object:
    """`data` as a value of the type `hint` names."""
    hint = _CONCRETE.get(hint, hint)
    origin = typing.get_origin(hint)
    if hint is Any or hint is object:
        return data
    if origin is Union or origin is types.UnionType:
        return _decode_union(data, typing.get_args(hint))
    if origin is tuple:
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(v, args[0]) for v in _list(data))
        return tuple(_decode(v, a) for v, a in zip(_list(data), args, strict=True))
    if origin is list:
        return [_decode(v, typing.get_args(hint)[0]) for v in _list(data)]
    if origin in (dict, Mapping):
        value_type = typing.get_args(hint)[1]
        return {str(k): _decode(v, value_type) for k, v in _dict(data).items()}
    if isinstance(hint, type) and issubclass(hint, ZmigrateError):
        return _decode_error(_dict(data))
    if isinstance(hint, type) and issubclass(hint, Enum):
        return hint(data)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _decode_dataclass(_dict(data), hint)
    if hint in _PLAIN and isinstance(data, _PLAIN[hint]) and (hint is bool
                                                               or not isinstance(data, bool)):
        return data  # as written: an int where a float is typed stays the int it was
    raise TypeError(f"{data!r} is not a {hint}")


def _decode_union(data: object, members: tuple[Any, ...]) -> object:
    if data is None and type(None) in members:
        return None
    # A plain value goes to the first member of its own type (an int stays an int in
    # `int | float`); anything else to the first member it reads as.
    for member in members:
        if member in _PLAIN and type(data) is member:
            return data
    for member in members:
        if member is type(None):
            continue
        try:
            return _decode(data, member)
        except (KeyError, TypeError, ValueError):
            continue
    raise TypeError(f"{data!r} is none of {members}")


def _decode_dataclass(data: dict[str, Any], cls: type) -> object:
    hints = _hints(cls)
    fields = dataclasses.fields(cls)
    made = cls(**{f.name: _decode(data[f.name], hints[f.name])
                  for f in fields if f.init and f.name in data})
    for f in fields:
        if not f.init and f.name in data:
            object.__setattr__(made, f.name, _decode(data[f.name], hints[f.name]))
    return made


def _decode_error(data: dict[str, Any]) -> ZmigrateError:
    """The error back as its own class, its attributes as they were (no constructor runs: the
    classes take different arguments)."""
    cls = _ERRORS.get(str(data.get("type")), ZmigrateError)
    attributes = _dict(data.get("attributes"))
    err = cls.__new__(cls)
    message = attributes.get("message", "")
    ZmigrateError.__init__(err, message)  # what a record of an older version may lack
    for name, value in attributes.items():
        setattr(err, name, _error_attribute(name, value))
    return err


def _error_attribute(name: str, value: Any) -> object:
    """An error's attribute as it was before its trip to JSON (an older record's `fix` is
    its words for every face)."""
    if name == "reason":
        return PreflightReason(value)
    if name == "remedies":
        return tuple(Remedy(v) for v in _list(value))
    return value


def _list(data: object) -> list[Any]:
    if not isinstance(data, list):
        raise TypeError(f"{data!r} is not a list")
    return data


def _dict(data: object) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise TypeError(f"{data!r} is not an object")
    return data
