"""What every command's parser shares: the program's name, usage errors in one line like every
other error, and argument types that hold a number to the limits files are held to, so a bad
number is refused before any file is read."""

from __future__ import annotations

import argparse
from typing import Any, NoReturn

from .. import formats, limits
from ..errors import InputError

PROG = "python -m playground"
FILE_HELP = ("conversation JSON file or agent log (JSONL, .traj, .json, .md, .db, a task folder or a .zip of one), "
             "or - for stdin")
MODEL_HELP = "model whose accounting to use (default: the request's own)"
FORMAT_HELP = f"input format (default: detected): {', '.join(formats.READERS)}"
TO_HELP = "convert to this API format first (what the conversion loses is listed in the notes)"
CALIBRATION_HELP = ("JSON file: a list of {request, usage} pairs (usage as the provider returned it) or "
                    "{model: factor}; corrects counts for that model")


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line, like every other error here."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{PROG}: error: {message} (see --help)\n")


def whole(high: int, low: int = 0) -> Any:
    """An argparse type: a whole number from ``low`` to ``high`` (the limits files are held to)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        try:
            return limits.whole(value, "", high=high, low=low)
        except InputError:
            raise argparse.ArgumentTypeError(f"expected a whole number from {low:,} to {high:,}, got {value}") from None

    return parse


tokens, number = whole(limits.MAX_TOKENS), whole(limits.MAX_COUNT)


def seconds(text: str) -> float:
    """An argparse type: a timeout, held to the limits' range."""
    try:
        return limits.seconds(float(text))
    except ValueError as exc:  # not a number, or an InputError: out of range
        said = exc.message if isinstance(exc, InputError) else "expected a number of seconds"
        raise argparse.ArgumentTypeError(f"{said}, got {text!r}") from None


def add_input_limit(p: argparse.ArgumentParser) -> None:
    """``--max-input-mb``; unset, ``main`` fills in the environment's or the default limit."""
    p.add_argument("--max-input-mb", type=whole(10**6, low=1), metavar="MB",
                   help=f"refuse input files larger than this (default {limits.DEFAULT_MAX_INPUT_MB}, or "
                        f"{limits.MAX_INPUT_ENV})")
