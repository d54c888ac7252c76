"""What asking found, as the page's *Ask the model* shows it: the questions before anything is sent,
then per type how many answers were right with the full request and with the policy's, each question
with what a right answer says, both answers and both grades, and each failure as one line naming its
question, call and side. Plain rows of values, so a test reads exactly what the page lays out and
the page decides nothing."""

from __future__ import annotations

from .asking import Asking, Quiz, located

FULL_RIGHT, COMPACTED_RIGHT = "right with the full request", "right with the policy's request"
GRADES = {True: "right", False: "wrong", None: "—"}  # None: not graded (a failed request, or no judge)


def _kind(kind: str) -> str:
    return kind.replace("_", " ")


def question_rows(quiz: Quiz) -> list[dict[str, object]]:
    """The questions the plan would send, numbered as their failures will be."""
    return [{"#": number, "call": asked.question.call, "type": _kind(asked.question.type),
             "question": asked.question.asks, "a right answer says": asked.question.answer_key,
             "graded": asked.question.graded} for number, asked in enumerate(quiz.asked, 1)]


def _right(correct: int, graded: int) -> str:
    return f"{correct} of {graded}" if graded else "not graded"


def type_rows(asking: Asking) -> list[dict[str, object]]:
    """Per question type: how many were asked, and how many answers were right on each side, of
    those graded (``not graded`` when none was: a judge's question without the judge)."""
    return [{"type": _kind(kind), "asked": n["asked"], FULL_RIGHT: _right(n["correct_full"], n["graded_full"]),
             COMPACTED_RIGHT: _right(n["correct_compacted"], n["graded_compacted"])}
            for kind, n in asking.by_type().items()]


def answer_rows(asking: Asking) -> list[dict[str, object]]:
    """Each question asked: what a right answer says, the two answers and their grades (an answer a
    request failed to bring is empty, its grade ``—``)."""
    return [{"#": number, "call": answer.question.call, "type": _kind(answer.question.type),
             "question": answer.question.asks, "a right answer says": answer.question.answer_key,
             "answer, full request": answer.full or "", "answer, policy's request": answer.compacted or "",
             "full": GRADES[answer.correct_full], "policy's": GRADES[answer.correct_compacted]}
            for number, answer in enumerate(asking.answers, 1)]


def failures(asking: Asking) -> list[str]:
    """Every failed request, one located line each, in the order asked (the CLI's words)."""
    return [line for number, answer in enumerate(asking.answers, 1) for line in located(number, answer)]
