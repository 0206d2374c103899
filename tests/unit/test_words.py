"""The CLI's words for every verdict, piece of advice and doctor note the engine makes.

The cases come from the real engine (tests/every_kind.py); the wizard's words for the same
cases are checked on its pages in tests/gui/test_words_faces.py.
"""

from __future__ import annotations

import json
import re

import pytest
from every_kind import reports, verdicts

from zmigrate.cli import words
from zmigrate.cli.common import event_to_json, stage_line
from zmigrate.cli.doctor import format_table
from zmigrate.engine.events import Finished, StageChanged, Summary
from zmigrate.engine.findings import AdviceKind, FindingKind, NoteKind
from zmigrate.engine.verdict.diagnosis import Bottleneck

VERDICTS = verdicts()
REPORTS = reports()
REPR = re.compile(r"\('|\[|\]|\bNone\b|\{|\}|<[a-z]")


def check_sentence(text: str) -> None:
    assert text[:1].isupper(), f"not a capital: {text!r}"
    assert not REPR.search(text), f"a Python repr in: {text!r}"
    assert "  " not in text, text


def test_the_cases_cover_every_kind() -> None:
    assert {v.kind for v in VERDICTS.values()} == set(Bottleneck)
    assert {v.finding.kind for v in VERDICTS.values()} == set(FindingKind)
    advice = {a.kind for v in VERDICTS.values() for a in v.advice}
    advice |= {a.kind for r in REPORTS.values() for a in r.advice}
    assert advice == set(AdviceKind)
    assert {n.kind for r in REPORTS.values() for s in r.stages for n in s.notes} == set(NoteKind)


@pytest.mark.parametrize("name", list(VERDICTS))
def test_every_verdict_is_worded_in_capitalised_sentences(name: str) -> None:
    v = VERDICTS[name]
    check_sentence(words.finding(v.finding))
    for a in v.advice:
        check_sentence(words.advice(a))
    lines = words.verdict_lines(v)
    assert lines[0].startswith("verdict: ") and len(lines) == 1 + len(v.advice)


@pytest.mark.parametrize("name", list(REPORTS))
def test_every_doctor_report_is_worded_in_capitalised_sentences(name: str) -> None:
    report = REPORTS[name]
    for a in report.advice:
        check_sentence(words.advice(a))
    for s in report.stages:
        for n in s.notes:
            check_sentence(words.note(n))
    table = format_table(report)
    assert "advice:" in table
    for a in report.advice:
        assert f"  - {words.advice(a)}" in table


def test_the_advice_names_the_flags_to_use() -> None:
    said = {a.kind: words.advice(a) for v in [*VERDICTS.values()] for a in v.advice}
    said |= {a.kind: words.advice(a) for r in REPORTS.values() for a in r.advice}
    assert said[AdviceKind.RAISE_RATE_LIMIT] == "Raise or drop --bwlimit (now 20M) to go faster"
    assert "(--buffer " in said[AdviceKind.RECEIVE_BUFFER]
    assert "--transport tcp" in said[AdviceKind.USE_TCP]
    assert "--transport tcp" in said[AdviceKind.TCP_FASTER]
    assert "--ssh-option Ciphers=aes128-gcm@openssh.com" in said[AdviceKind.TRY_CIPHER]
    assert "--ssh-option Ciphers=aes128-gcm@openssh.com" in said[AdviceKind.FASTER_CIPHER]
    assert "zmigrate doctor SRC DST --write-test" in said[AdviceKind.WRITE_TEST]
    assert "zmigrate doctor SRC DST" in said[AdviceKind.RUN_DOCTOR]
    assert said[AdviceKind.CLEANUP_FAILED].endswith(
        "zfs destroy -r backup/zmigrate-doctor-5e1f09aa")
    assert said[AdviceKind.LEFTOVER_DATASET].startswith(
        "An earlier doctor run left its write test's dataset backup/zmigrate-doctor-0badcafe on "
        "backup-01 (created 2025-11-2")  # (the day in this computer's time zone)
    assert said[AdviceKind.LEFTOVER_DATASET].endswith(
        ", 3 GiB): destroy it there with zfs destroy -r backup/zmigrate-doctor-0badcafe")
    assert "the --bwlimit cap of 20 MiB/s" in words.finding(VERDICTS["rate limited"].finding)


def test_json_carries_the_words_next_to_the_data() -> None:
    v = VERDICTS["network over ssh"]
    live = event_to_json(v)
    assert live is not None
    assert live["text"] == words.finding(v.finding)
    assert live["advice"] == [words.advice(a) for a in v.advice]
    assert [a["kind"] for a in live["advice_items"]] == [a.kind.value for a in v.advice]
    summary = Summary(1, 1.0, 1.0, 0, 1, 1, None, extra={"verdict": v.to_json()})
    done = event_to_json(Finished(summary))
    assert done is not None and done["verdict"] == live
    json.dumps(done)

    report = REPORTS["slow network"]
    data = json.loads(json.dumps(words.report_json(report)))
    assert data["advice"] == [words.advice(a) for a in report.advice]
    assert [a["kind"] for a in data["advice_items"]] == [a.kind.value for a in report.advice]
    ssh = next(s for s in data["stages"] if s["name"] == "ssh")
    assert ssh["note"] == "The source cannot ssh to the destination: Permission denied (publickey)."
    assert ssh["notes"] == [{"kind": "ssh_unreachable",
                             "figures": {"reason": "Permission denied (publickey)."}}]


def test_a_stage_line_names_the_dataset_of_a_tree() -> None:
    assert stage_line(StageChanged("sending", "step 1/1: full", "tank/a")) == \
        "[tank/a] sending: step 1/1: full"
    assert stage_line(StageChanged("verifying", "checking every dataset")) == \
        "verifying: checking every dataset"
    assert event_to_json(StageChanged("sending", "", "tank/a"))["dataset"] == "tank/a"
