"""A job's request as `send`'s own arguments: what the runner runs (`zmigrate _runner ID`
parses them as `zmigrate send` does), made from the engine's choices by a face that has them
as objects (the wizard). None where they cannot be said that way: then the face keeps the
job in its own process."""

from __future__ import annotations

from ..hosts.login import HostSpec
from ..plan import Options
from ..tree import TreeRequest

# Options `send` has no argument for; a value other than the default keeps the job local.
_UNSAID = ("ssh_target", "ssh_route", "large_blocks", "embedded", "send_properties", "origin")


def host_text(spec: HostSpec | None) -> str | None:
    """`[user@]host` for a login the CLI can repeat (no port, key or password of its own:
    those come from the SSH config), else None."""
    if spec is None:
        return None
    if spec.port is not None or spec.identity is not None or spec.password is not None:
        return None
    return f"{spec.user}@{spec.host}" if spec.user else spec.host


def options_argv(o: Options) -> list[str] | None:
    """`send`'s arguments for `o`; None if one of its choices has no argument."""
    default = Options()
    if any(getattr(o, f) != getattr(default, f) for f in _UNSAID):
        return None
    flags = [("--history", o.history), ("--force", o.force), ("--no-readonly", not o.readonly),
             ("--no-intermediates", not o.intermediates), ("--hash", o.verify_hash),
             ("--resume", o.resume), ("--discard-partial", o.discard_partial),
             ("--no-resumable", o.resumable is False), ("--raw", o.raw is True),
             ("--decrypt", o.decrypt), ("--no-compressed", o.compressed is False),
             ("--compress-always", o.compress_always), ("-R", o.replicate),
             ("--no-mount", not o.mount), ("--bookmark", o.bookmark)]
    argv = [flag for flag, on in flags if on]
    valued: list[tuple[str, object]] = [
        ("--transport", o.transport.value if o.transport else None),
        ("--block", o.block_size), ("--buffer", o.buffer_size), ("--port", o.port),
        ("--bwlimit", o.rate_limit), ("--base", o.base),
        ("--connect-address", o.connect_address), ("--allow-address", o.allow_address),
        ("--compress", o.compress.value if o.compress else None),
        ("--stall-after", o.stall_after), ("--stall-timeout", o.stall_timeout)]
    for flag, value in valued:
        if value is not None:
            argv += [flag, str(value)]
    for opt in o.ssh_options:
        argv += ["--ssh-option", opt.removeprefix("-o")]
    for name, value in o.properties:
        argv += ["-o", f"{name}={value}"]
    for name in o.exclude_properties:
        argv += ["-x", name]
    return argv


def send_argv(src: HostSpec | None, dst: HostSpec | None, snapshot: str, destination: str,
              options: Options, tree: TreeRequest | None = None) -> list[str] | None:
    """`send SRC DST ...` of one snapshot, or of a tree (`tree`, `snapshot` its root: with
    the tree's snapshot, or `--snapshot` to take one when it has none)."""
    src_text, dst_text = host_text(src), host_text(dst)
    rest = options_argv(tree.options if tree is not None else options)
    if src_text is None or dst_text is None or rest is None:
        return None
    sudo = [f for f, on in (("--sudo-source", src is not None and src.sudo),
                            ("--sudo-destination", dst is not None and dst.sudo)) if on]
    if tree is None:
        return ["send", f"{src_text}:{snapshot}", f"{dst_text}:{destination}", *rest, *sudo]
    source = f"{tree.root}@{tree.snapshot}" if tree.snapshot else tree.root
    argv = ["send", "-r", f"{src_text}:{source}", f"{dst_text}:{tree.destination}", *rest,
            *sudo, *([] if tree.snapshot else ["--snapshot"])]
    for name in tree.excludes:
        argv += ["--exclude", name]
    argv += ["--final"] if tree.final else []
    argv += ["--mount-root", tree.mount_root] if tree.mount_root else []
    argv += ["--parallel", str(tree.parallel)] if tree.parallel is not None else []
    return argv


def request_of(argv: list[str], src: HostSpec | None, dst: HostSpec | None,
               destination: str) -> dict[str, object]:
    """The record's request: the arguments, and the hosts and destination a reader needs to
    look for what a dead runner left (engine/runner/died.py)."""
    source = next((a for a in argv[1:] if not a.startswith("-")), None)  # send's first
    return {"argv": argv, "source": source, "source_host": host_text(src) or "local",
            "destination_host": host_text(dst) or "local", "destination": destination,
            "sudo_source": bool(src and src.sudo), "sudo_destination": bool(dst and dst.sudo)}


__all__ = ["request_of", "host_text", "options_argv", "send_argv"]
