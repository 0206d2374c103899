"""Entry point: `zmigrate` with no arguments opens the wizard, otherwise the CLI."""

from __future__ import annotations

import sys


def main() -> int:
    from .cli.main import main as cli_main

    return cli_main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
