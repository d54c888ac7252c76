"""The command line: ``python -m playground count|compact|rules|accuracy|replay|compare|probe|evaluate|tune``.

One module per command, each with ``add_parser(commands)`` and ``run(args) -> int``; the parser is
assembled from them here. Bad input of any kind exits with status 2 and one line on stderr naming
what is wrong and where; nothing is ever written half-way. Set PLAYGROUND_DEBUG=1 to see
tracebacks of bugs. Every command and option: docs/cli.md.
"""

from __future__ import annotations

import argparse
import os
import sys

from .. import limits
from ..errors import InputError
from . import accuracy, compact, compare, count, evaluate, probe, replay, rules, tune
from .arguments import PROG, Parser

COMMANDS = (count, compact, rules, accuracy, replay, compare, probe, evaluate, tune)  # in --help's order


def parser() -> argparse.ArgumentParser:
    top = Parser(prog=PROG, description="Count and compact LLM agent conversations (see docs/cli.md).")
    commands = top.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS:
        command.add_parser(commands)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        if hasattr(args, "max_input_mb"):
            args.max_input_mb = args.max_input_mb or limits.max_input_mb()
        return args.run(args)
    except InputError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug: say so in one line unless asked for the traceback
        if os.environ.get("PLAYGROUND_DEBUG"):
            raise
        print(f"{PROG}: internal error (please report, PLAYGROUND_DEBUG=1 shows details): "
              f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
