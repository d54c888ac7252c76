"""Grading an answer where the fact is exact: the tokens a right answer repeats as they are (paths,
numbers, identifiers), and whether an answer says them, normalised (case, backslashes, a path by its
file name) so a model that names the fact in its own sentence is right and one that names another is not."""

from __future__ import annotations

import re

EXACT_AT_MOST = 2  # tokens of a requirement or an error line an answer must repeat: the longest
_TOKEN = re.compile(r"[\w./~+-]+")


def exact_tokens(text: str) -> tuple[str, ...]:
    """The tokens of ``text`` a right answer repeats as they are: paths, numbers and identifiers (a
    digit, or a dot, underscore or slash between word characters, or a capital after a small letter)."""
    found = (token.rstrip(".-") for token in _TOKEN.findall(text))
    return tuple(dict.fromkeys(token for token in found if len(token) >= 3 and (
        re.search(r"\d|\w[._/]\w", token) or re.search(r"[a-z][A-Z]", token))))


def longest(tokens: tuple[str, ...]) -> tuple[str, ...]:
    kept = set(sorted(tokens, key=len, reverse=True)[:EXACT_AT_MOST])
    return tuple(token for token in tokens if token in kept)


def _normal(text: str) -> str:
    return text.lower().replace("\\", "/")


def found(token: str, answer: str) -> bool:
    """Whether ``answer`` says ``token``: as a whole token (not inside a longer name; a sentence's
    full stop after it is fine), ignoring case; a path also by its file name alone."""
    said, token = _normal(answer), _normal(token)
    forms = {token, token.rstrip("/").rsplit("/", 1)[-1]}
    return any(re.search(rf"(?<![\w.-]){re.escape(form)}(?![\w-]|\.\w)", said) for form in forms if form)


def grade(expected: tuple[str, ...], answer: str) -> bool | None:
    """Right when every expected token is in the answer; None when there is none (only a judge can say)."""
    return all(found(token, answer) for token in expected) if expected else None
