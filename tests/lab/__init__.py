"""The real test lab: zfs-fuse pools and two sshd "hosts" on loopback, as pytest fixtures.

Load it with `pytest_plugins = ["lab.plugin"]` (tests/conftest.py does). Helpers for tests live in
`lab.util`; the fixtures are documented in `lab.plugin`.
"""
