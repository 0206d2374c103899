"""`zmigrate list HOST[:pool/ds]`: datasets and snapshots of a host."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any, TextIO

from zmigrate.engine import cmdline, zfs

from ..engine import plain_words
from ..engine.errors import ZmigrateError
from ..engine.units import format_size
from ..engine.wire import toward_us
from .common import EXIT_OK, TerminalPrompts, connect_host, split_location


def add_parser(sub: Any) -> None:
    """Add `zmigrate list` to the CLI's subcommands."""
    lp = sub.add_parser("list", help="list datasets and snapshots of a host")
    lp.add_argument("target", help="HOST or HOST:pool/dataset (HOST may be an ssh alias or local)")
    lp.add_argument("-s", "--snapshots", action="store_true", help="show snapshots too")
    lp.add_argument("--json", action="store_true", help="one JSON object per dataset")
    lp.add_argument("--sudo", action="store_true", help="run zfs through sudo -n")


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    target = args.target
    if target.endswith(":") and "/" not in target:
        target = target[:-1]  # `host:` as scp users type it: the whole host
    host_text, root = split_location(target) if ":" in target else (target, "")
    if root:
        cmdline.dataset(root)
    host = connect_host(host_text, args.sudo, TerminalPrompts())
    try:
        caps = zfs.probe(host)
        zfs.require_zfs(host, caps)
        datasets = zfs.inventory(host, caps, root or None)
        if root and not datasets:
            raise ZmigrateError(f"{root} does not exist", host=host.label,
                                fix=f"run `zmigrate list {host_text}` to see what there is")
        if args.json:
            for ds in datasets:
                print(json.dumps({
                    "name": ds.name, "type": ds.type, "guid": ds.guid, "used": ds.used,
                    "referenced": ds.referenced, "available": ds.available,
                    "creation": ds.creation, "resume_token": ds.resume_token,
                    "snapshots": [{"name": s.name, "guid": s.guid, "creation": s.creation,
                                   "used": s.used, "referenced": s.referenced}
                                  for s in ds.snapshots],
                    # Bookmarks (pool/ds#mark) where the host has them (OpenZFS), else [].
                    "bookmarks": [{"name": b.name, "guid": b.guid, "creation": b.creation,
                                   "createtxg": b.createtxg} for b in ds.bookmarks],
                }), file=out)
            return EXIT_OK
        print(f"# {host.title}: {caps.describe()}", file=out)
        for note in host.notes:
            print(f"# {host.label}: {note}", file=out)
        link = toward_us(host, caps.ssh_client_ip)
        if link is not None:
            print(f"# {host.label}: link {plain_words.link_brief(link)} (toward this computer)",
                  file=out)
        print(f"{'NAME':<48} {'USED':>10} {'REFER':>10}  {'CREATED':<16} GUID", file=out)
        for ds in datasets:
            print(f"{ds.name:<48} {format_size(ds.used):>10} {format_size(ds.referenced):>10}  "
                  f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(ds.creation)):<16} {ds.guid}",
                  file=out)
            for s in ds.snapshots if args.snapshots else []:
                print(f"  @{s.short:<45} {format_size(s.used):>10} {format_size(s.referenced):>10}"
                      f"  {time.strftime('%Y-%m-%d %H:%M', time.localtime(s.creation)):<16} "
                      f"{s.guid}", file=out)
        return EXIT_OK
    finally:
        host.close()


