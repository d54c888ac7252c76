"""``accuracy``: our counts beside the counts providers billed, over the shared token-count
fixtures (the figures the meters' constants were fitted to; ``refit.accuracy`` measures them)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..errors import InputError
from .output import dump, write

DEFAULT_FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "token-counts"


def add_parser(commands: Any) -> None:
    p = commands.add_parser("accuracy", help="compare our counts with billed counts in the fixtures")
    p.add_argument("--fixtures", default=str(DEFAULT_FIXTURES), help="folder of token-count fixture files")
    p.add_argument("--json", action="store_true", help="print every case as JSON")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..refit import accuracy  # (a refitting tool, not run time: no other command loads it)

    folder = Path(args.fixtures)
    if not folder.is_dir():
        raise InputError("fixture folder not found (pass --fixtures DIR)", where=str(folder))
    cases = accuracy.measure(folder)
    providers = [m for m in (accuracy.measure_provider(folder, f) for f in accuracy.PROVIDER_FILES) if m]
    if args.json:
        write(dump([case.__dict__ | {"error": case.error} for case in cases]
                   + [case.__dict__ | {"error": case.error, "loo_error": case.loo_error}
                      for measured in providers for case in measured.cases]), None)
    else:
        write(accuracy.render(cases, providers) + "\n", None)
    return 0
