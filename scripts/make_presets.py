"""Build the example conversations in ``presets/`` from their sources in ``presets/source/``.

    python scripts/make_presets.py           # write presets/*.json
    python scripts/make_presets.py --check   # compare with the files on disk; exit 1 listing any that differ

Each preset is a folder ``presets/source/<key>/``:

- ``preset.toml``: title, description, order, model, threshold, keep_recent and (optionally) the
  rules, as ``[[rules.tool_calls]]`` / ``[[rules.tool_results]]`` rows;
- ``conversation.json``: the request as the provider's API takes it, where a long text is
  ``{"$text": "texts/NNN-….md"}`` (the file's content minus its one final newline) and a call's
  arguments string is ``{"$json": {…}}`` (written back as compact JSON text, as the APIs send it);
- ``texts/``: those texts, one file each, so prose is edited as prose and not inside Python strings.

The app reads only the built ``presets/*.json``; ``--check`` keeps them in step with the sources.
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PRESETS_DIR = ROOT / "presets"
SOURCE_DIR = PRESETS_DIR / "source"
HEADER = ("title", "description", "order", "model", "threshold", "keep_recent")  # in the order written


class SourceError(ValueError):
    """A preset source that cannot be built; the message names the file and the place."""


def dump(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


def read_text(folder: Path, name: Any, where: str) -> str:
    """A ``$text`` file: its content exactly, minus the one newline every file ends with (so an
    editor that adds a final newline changes nothing)."""
    path = folder / str(name)
    if not isinstance(name, str) or not path.is_file() or folder.resolve() not in path.resolve().parents:
        raise SourceError(f"{where}: $text names no file inside {folder}: {name!r}")
    with path.open(encoding="utf-8", newline="") as handle:
        text = handle.read()
    return text[:-1] if text.endswith("\n") else text


def expand(value: Any, folder: Path, where: str) -> Any:
    """The skeleton with every ``$text`` read and every ``$json`` written back as compact JSON text."""
    if isinstance(value, dict):
        if set(value) == {"$text"}:
            return read_text(folder, value["$text"], where)
        if set(value) == {"$json"}:
            return json.dumps(expand(value["$json"], folder, where), ensure_ascii=False, separators=(",", ":"))
        return {key: expand(item, folder, f"{where}.{key}") for key, item in value.items()}
    if isinstance(value, list):
        return [expand(item, folder, f"{where}[{index}]") for index, item in enumerate(value)]
    return value


def build_preset(folder: Path) -> dict[str, Any]:
    """One preset's JSON object, keys in the order the app's files have always had them."""
    toml_path, skeleton_path = folder / "preset.toml", folder / "conversation.json"
    try:
        meta = tomllib.loads(toml_path.read_text(encoding="utf-8"))
        skeleton = json.loads(skeleton_path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise SourceError(f"{folder.name}: {exc}") from None
    missing = [key for key in HEADER if key not in meta]
    unknown = sorted(set(meta) - {*HEADER, "rules"})
    if missing or unknown:
        raise SourceError(f"{toml_path}: missing {missing}, unknown {unknown}")
    data = {key: meta[key] for key in HEADER}
    if "rules" in meta:
        data["rules"] = {table: meta["rules"].get(table, []) for table in ("tool_calls", "tool_results")}
    data["conversation"] = expand(skeleton, folder, f"{skeleton_path.relative_to(ROOT)}: conversation")
    return data


def build(source: Path = SOURCE_DIR) -> dict[str, str]:
    """Every preset file's name and exact text."""
    return {f"{folder.name}.json": dump(build_preset(folder))
            for folder in sorted(source.iterdir()) if (folder / "preset.toml").is_file()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the example conversations in presets/.")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 listing the files that differ from what would be written")
    parser.add_argument("--out", type=Path, default=PRESETS_DIR, help="folder to write to (default: presets/)")
    args = parser.parse_args(argv)
    try:
        files = build()
    except SourceError as exc:
        print(f"make_presets: error: {exc}", file=sys.stderr)
        return 2
    if args.check:
        stale = [name for name, text in files.items()
                 if not (args.out / name).is_file() or (args.out / name).read_text(encoding="utf-8") != text]
        for name in stale:
            print(f"differs: {args.out / name}", file=sys.stderr)
        if stale:
            print("run: python scripts/make_presets.py", file=sys.stderr)
            return 1
        print(f"{len(files)} presets up to date")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (args.out / name).write_text(text, encoding="utf-8")
        print(f"wrote {args.out / name} ({len(text.encode()):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
