"""The CLI's closing lines of one dataset's transfer (cli.common.dataset_closing)."""

from __future__ import annotations

from zmigrate.cli import words
from zmigrate.cli.common import dataset_closing
from zmigrate.engine.events import Bottleneck, Summary, Verdict
from zmigrate.engine.findings import Finding, FindingKind
from zmigrate.engine.units import MiB


def _summary(**extra: object) -> Summary:
    return Summary(64 * MiB, 4.0, 16 * MiB, 2, 7, 7, None, extra=dict(extra))


def test_the_closing_line_says_what_arrived_how_it_was_checked_and_the_mbuffers() -> None:
    s = _summary(mbuffers={"send": {"bytes": 64 * MiB, "rate": 16 * MiB}})
    assert dataset_closing(None, s) == (
        "done: 64 MiB in 0:04 (16 MiB/s average), verified guid 7, stream checksums checked "
        "by zfs receive, receive buffer ran empty 2x; mbuffer send 64 MiB at 16 MiB/s")


def test_the_verdict_follows_the_closing_line_in_the_clis_words() -> None:
    verdict = Verdict(Bottleneck.DESTINATION,
                      Finding(FindingKind.RECEIVE_FULL, {"fill": 98.5, "rate": 12_000}), (),
                      {"fill": 98.5}, 0.75, True, 31.5, "tank/t/a")
    first, *rest = dataset_closing(None, _summary(verdict=verdict.to_json())).split("\n")
    assert first.startswith("done: ")
    assert rest == words.verdict_lines(verdict)
