"""``count``: the prompt-token total, as the provider would bill it; ``--json`` adds the encoding,
whether the count is exact (and every reason it is not), the price used and each item's count."""

from __future__ import annotations

import argparse
from typing import Any

from .. import formats
from ..present.report import count_to_json
from ..words import plural
from . import accounting
from .arguments import CALIBRATION_HELP, FILE_HELP, FORMAT_HELP, MODEL_HELP, TO_HELP, add_input_limit
from .inputs import load_conversation
from .output import dump, write

BILLS_FIRST = ("this log records what the provider billed for {}: `replay --json` fits the count to those bills "
               "(log_calibration, which --calibration reads), nearer than any vocabulary shipped here")


def add_parser(commands: Any) -> None:
    p = commands.add_parser("count", help="print the prompt-token total")
    p.add_argument("file", help=FILE_HELP)
    p.add_argument("--model", help=MODEL_HELP)
    p.add_argument("--format", choices=list(formats.READERS), help=FORMAT_HELP)
    p.add_argument("--to", choices=list(formats.FORMATS), help=TO_HELP)
    p.add_argument("--json", action="store_true", help="print the total, encoding, exactness and per-item counts")
    p.add_argument("--calibration", help=CALIBRATION_HELP)
    add_input_limit(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    conversation = load_conversation(args.file, args.max_input_mb, args.format, args.to)
    model = accounting.model(args.model, conversation)
    result = accounting.engine(args.calibration, args.max_input_mb, model).count(conversation, model)
    if not args.json:
        write(f"{result.total}\n", None)
        return 0
    price = accounting.prices(None, args.max_input_mb).dated(conversation.started).get(model, conversation.format)
    data = count_to_json(result, conversation) | {"priced_as": price.priced_as}
    if not result.exact and conversation.billed and args.calibration is None:  # the log's own fit comes first
        data["estimate_because"] = [BILLS_FIRST.format(plural(len(conversation.billed), "call")),
                                    *data["estimate_because"]]
    write(dump(data), None)
    return 0
