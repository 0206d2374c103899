"""Name validation and quoting: nothing a user types reaches a shell unquoted."""

from __future__ import annotations

import shlex
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zmigrate.engine import cmdline
from zmigrate.engine.errors import InvalidNameError


@pytest.mark.parametrize("name", ["tank", "tank/home", "tank/a.b-c_d:e", "p/x/y/z",
                                  "tank/a b", "tank/My Documents/2024 photos"])
def test_valid_datasets(name: str) -> None:
    assert cmdline.dataset(name) == name


@pytest.mark.parametrize("name", [
    "", "-tank", "tank/", "/tank", "tank//a", "-a b", "tank/a\tb", "tank/$(id)",
    "tank/a;b", "tank/`x`",
    "tank/a|b", "tank/../x", "tank/.", "tank/a\nb", "tank/a'b", 'tank/a"b', "t" * 300,
])
def test_invalid_datasets(name: str) -> None:
    with pytest.raises(InvalidNameError):
        cmdline.dataset(name)


def test_names_with_spaces_are_one_quoted_word() -> None:
    name = cmdline.snapshot("tank/My Documents@before upgrade")
    line = cmdline.join(["zfs", "send", name])
    assert line == "zfs send 'tank/My Documents@before upgrade'"
    assert shlex.split(line)[-1] == name
    assert cmdline.split_snapshot(name) == ("tank/My Documents", "before upgrade")
    assert cmdline.snap_part("before upgrade") == "before upgrade"


def test_snapshots() -> None:
    assert cmdline.split_snapshot("tank/home@auto2010-05-31_23:35") == ("tank/home",
                                                                      "auto2010-05-31_23:35")
    for bad in ("tank/home", "tank@a@b", "tank/home@", "tank/home@a;b", "@x"):
        with pytest.raises(InvalidNameError):
            cmdline.snapshot(bad)


@given(st.lists(st.text(min_size=0, max_size=20), min_size=1, max_size=6))
def test_join_round_trips_through_a_shell_parser(words: list[str]) -> None:
    words = [w.replace("\x00", "") for w in words]
    assert shlex.split(cmdline.join(words)) == words


@pytest.mark.parametrize("shell", ["sh", "dash", "bash"])
@pytest.mark.parametrize(("first", "status", "out"), [
    ("printf 'a\\nb\\n'; exit 3", 3, "A\nB\n"),  # failed after writing: the line fails
    ("printf x", 0, "X"),
    ("exit 0", 0, ""),
])
def test_a_pipeline_ends_with_its_first_stages_status(shell: str, first: str, status: int,
                                                      out: str) -> None:
    """The rest of the pipeline (here `tr`) ends well whatever it reads: the line's status is
    the first stage's, and the rest's output still reaches stdout."""
    r = subprocess.run([shell, "-c", cmdline.status_of_first(first, "tr a-z A-Z")],
                       capture_output=True, text=True, check=False, timeout=10)
    assert (r.returncode, r.stdout, r.stderr) == (status, out, "")
