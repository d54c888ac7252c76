"""``rules``: a rules file checked and printed as JSON or as the book's Python dicts, or rules
suggested for a conversation's own tools (``--suggest``: the JSON on stdout, why each row on stderr)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..meter.tokens import Meter
from ..rules.ruleset import rules_to_json, rules_to_python
from ..tune.checked import checked_rules
from . import accounting
from .arguments import add_input_limit
from .inputs import load_conversation, load_rules
from .output import dump, write


def add_parser(commands: Any) -> None:
    p = commands.add_parser("rules", help="check a rules file; print it as JSON or as the book's Python dicts")
    p.add_argument("file", nargs="?", help="rules JSON file (default: the book's rules)")
    p.add_argument("--python", action="store_true", help="print the book's two Python dicts")
    p.add_argument("--suggest", metavar="CONVERSATION",
                   help="print rules suggested for this conversation's tools (JSON; why each row, on stderr)")
    p.add_argument("--model", help="with --suggest: model whose tokenizer sizes the tools (default: the request's)")
    p.add_argument("--recall", action="store_true",
                   help="with --suggest: tools that cannot be re-run get a reference naming the key their output is "
                        "stored under, for an agent wrapped with a recall store (docs/agent.md)")
    add_input_limit(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.suggest:
        conversation = load_conversation(args.suggest, args.max_input_mb)
        suggestion = checked_rules(conversation, Meter(accounting.model(args.model, conversation)), args.recall)
        print(suggestion.explain(), file=sys.stderr)
        write(dump(suggestion.rules_json()), None)
        return 0
    rules = load_rules(args.file, args.max_input_mb)
    write(rules_to_python(rules) if args.python else dump(rules_to_json(rules)), None)
    return 0
