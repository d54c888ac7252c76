"""Probes that ask the model what it kept: at chosen calls, a question about the run's facts (the
ledger's, as they stood at that call) goes to the same model twice — after the request as it was and
after the policy's request at that call — and each answer is graded.

``replay``'s fates say whether a fact is still *in* the request; this asks whether the model can still
*say* it. Questions come from the ledger (``facts.ledger``), one per type at a call, from templates in
``data/probe_questions.json``: the files written so far (paths), what the user said about a topic
(requirements), the exit status of the last failing command with a code, the last error of a call,
and what the agent will do next (the log's own next step is the reference). An answer is graded
offline where the fact is exact — every expected path, number or identifier appears in it, compared
lower-cased, a path also by its file name — and otherwise only by an optional judge: one more call to
the same model, with a prompt from the same data file, counted in the estimate.

The room's public face (what the CLI and a page call): ``questions`` (offline, free: ``questions.py``)
chooses the calls and writes the questions; ``plan`` builds the requests in the provider's wire format
and the estimate, ``ask`` sends them through any ``probe.Send`` and grades (``asking.py``); ``grading``
says whether an answer repeats an exact fact; ``results`` gives what a page shows of the questions
and answers (rows, the right answers per type, the failures located). A failed request (an error, a
timeout, a reply that is not JSON) is named with its question and side, and the other questions go on."""

from .asking import Answer, Asking, Quiz, ask, asking_to_json, estimate_lines, judge_request, located, plan
from .grading import exact_tokens, found, grade
from .questions import DEFAULT_QUESTIONS, TYPES, Question, questions
from .results import COMPACTED_RIGHT, FULL_RIGHT, answer_rows, failures, question_rows, type_rows

__all__ = ["COMPACTED_RIGHT", "DEFAULT_QUESTIONS", "FULL_RIGHT", "TYPES", "Answer", "Asking", "Question", "Quiz",
           "answer_rows", "ask", "asking_to_json", "estimate_lines", "exact_tokens", "failures", "found", "grade",
           "judge_request", "located", "plan", "question_rows", "questions", "type_rows"]
