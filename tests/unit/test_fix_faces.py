"""Errors the wizard shows too carry their ways out as remedies: the command line's fix names
its flags, the wizard's words (gui/words.remedy) name its own controls."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import paramiko
import pytest

from zmigrate.engine.errors import AuthError, ZmigrateError
from zmigrate.engine.golive import record
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.hosts.login import Resolved, _login_error
from zmigrate.engine.remedies import Remedy
from zmigrate.engine.runner.remote import RemoteRunner, RemoteRunnerError

FLAG = re.compile(r"--[a-z]")


def _faces(err: ZmigrateError) -> tuple[str, str]:
    from zmigrate.gui import words

    wizard = words.error_fix(err)
    assert err.fix is not None and wizard is not None
    return err.fix, wizard


def test_a_login_with_no_credential_to_offer_names_the_key_file_choice() -> None:
    r = Resolved("nas", 22, "root", (), None)
    err = _login_error(paramiko.SSHException("No authentication methods available"), r, "nas",
                       Path("/nonexistent/known_hosts"), "nas")
    assert isinstance(err, AuthError) and err.remedies == (Remedy.NAME_KEY,)
    cli, wizard = _faces(err)
    assert "--identity" in cli and "ssh-add" in cli
    assert "Key file" in wizard and "Hosts page" in wizard and not FLAG.search(wizard), wizard


def test_a_runner_named_as_this_computer_is_refused_in_each_faces_words() -> None:
    with pytest.raises(RemoteRunnerError) as refused:
        RemoteRunner.open("local")
    assert "this computer" in refused.value.message and not FLAG.search(refused.value.message)
    cli, wizard = _faces(refused.value)
    assert "--runner" in cli
    assert "This computer" in wizard and not FLAG.search(wizard), wizard


def test_going_live_without_a_copy_names_the_final_sync_in_each_faces_words(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The copy's root is not on the destination: the final sync comes first."""
    monkeypatch.setenv("ZMIGRATE_DATA_DIR", str(tmp_path))
    host, caps = LocalHost(), SimpleNamespace(properties=())
    monkeypatch.setattr(record, "read_props", lambda *_a, **_k: {})
    with pytest.raises(ZmigrateError) as refused:
        record.prepare(host, host, caps, caps, "old/t", "new/t")  # type: ignore[arg-type]
    assert refused.value.remedies == (Remedy.FINAL_SYNC_FIRST,)
    cli, wizard = _faces(refused.value)
    assert "send -r --final" in cli
    assert "Final sync on the Done page" in wizard and not FLAG.search(wizard), wizard
