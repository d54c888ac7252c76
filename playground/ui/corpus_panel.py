"""The Corpus tab: many runs at once (``playground.evaluate`` and ``playground.tune``, in this
process): upload a zip or several logs, evaluate the page's policy under the chosen policies,
read one row per run, open a run in the other tabs, see the distributions and where the
threshold should sit, and download the table."""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

import altair as alt
import streamlit as st

from .. import corpus
from ..compaction import Settings
from ..corpus import (
    Evaluation,
    Found,
    Grid,
    Setup,
    Source,
    evaluate_batch,
    load,
    partition,
    summarize,
    tune_batch,
    uploaded,
)
from ..errors import InputError
from ..formats import RUN_SUFFIXES
from ..policies import POLICIES
from ..present import literal
from ..rules import Rules
from ..run import UNKNOWN_NOTE, rounded
from ..summarize import SummarySettings
from ..words import plural
from . import run_setup, state, widgets

UPLOAD_TYPES = ["zip", "tgz", "gz", "tar", *(suffix.lstrip(".") for suffix in RUN_SUFFIXES)]  # as the upload reads
DEFAULT_POLICIES = ["none", "rules", "clear-tool-uses"]


def _setup(rules: Rules, settings: Settings, summary: SummarySettings | None) -> Setup:
    """The page's policy as ``evaluate`` takes it: the page's one settings value (the sidebar's
    rules, compaction settings and summarization, the Run view's controls for the other policies)."""
    limit_mb, _ = state.input_limit()
    return Setup(policies=tuple(st.session_state.get(state.CORPUS_POLICIES) or DEFAULT_POLICIES), rules=rules,
                 policy=run_setup.policy_settings(rules, settings, summary), max_input_mb=limit_mb)


def _found(uploads: list[Any], limit_mb: int) -> list[Found]:
    """Every run in the uploads; the uploads together are held to the input limit."""
    total = sum(upload.size for upload in uploads)
    if total > limit_mb * 1024 * 1024:
        raise InputError(f"the files add up to {total / 1024 / 1024:,.1f} MB, over the limit of {limit_mb:,} MB for "
                         "one corpus (set PLAYGROUND_MAX_INPUT_MB to change it)")
    return [found for upload in uploads for found in uploaded(upload.name, upload.getvalue(), limit_mb)]


def _with_progress(found: list[corpus.Found], task: corpus.Task, what: str) -> list[tuple[int, Any]]:
    bar = st.progress(0.0, text=f"{what}: 0 of {plural(len(found), 'file')}")
    outcomes = []
    for outcome in corpus.run(found, task, workers=0):
        outcomes.append(outcome)
        bar.progress(len(outcomes) / max(1, len(found)), text=f"{what}: {len(outcomes):,} of {len(found):,} files")
    bar.empty()
    return outcomes


def _evaluate(rules: Rules, settings: Settings, summary: SummarySettings | None) -> None:
    uploads = st.session_state.get(state.CORPUS_UPLOAD) or []
    st.session_state[state.CORPUS_MESSAGE] = None
    try:
        with st.spinner(f"Reading {plural(len(uploads), 'uploaded file')}…"):
            found = _found(uploads, state.input_limit()[0])
    except InputError as exc:  # the last good result stays
        st.session_state[state.CORPUS_MESSAGE] = str(exc)
        return
    setup = _setup(rules, settings, summary)
    evaluation = Evaluation.of(_with_progress(found, functools.partial(evaluate_batch, setup=setup),
                                                f"Evaluating under {', '.join(setup.policies)}"))
    st.session_state[state.CORPUS_RESULT] = evaluation
    st.session_state[state.CORPUS_SOURCES] = {item.name: item for item in found if isinstance(item, Source)}
    st.session_state[state.CORPUS_TUNED] = None
    if "rules" in setup.policies:
        grid = _grid(settings.threshold)
        tune_setup = replace(setup, policies=("rules",))
        runs, _, _ = partition(_with_progress(
            [st.session_state[state.CORPUS_SOURCES][run.source] for run in evaluation.runs],
            functools.partial(tune_batch, setup=tune_setup, grid=grid), "Sweeping the threshold"))
        st.session_state[state.CORPUS_TUNED] = summarize(runs, tune_setup, grid)


def _open(name: str) -> None:
    """Show one run of the corpus as the conversation of the other tabs (kept in the picker)."""
    source = st.session_state.get(state.CORPUS_SOURCES, {}).get(name)
    loaded = load(source, Setup()) if source else None
    if isinstance(loaded, tuple):
        state.keep_own(loaded[0], f"{name.rsplit('/', 1)[-1]} (from the corpus, {state.now()})")
        st.session_state[state.CORPUS_MESSAGE] = None
    else:
        st.session_state[state.CORPUS_MESSAGE] = f"{name}: cannot open it"


def _rows(evaluation: Evaluation) -> list[dict[str, Any]]:
    """One row per run: each policy's cost and saving side by side."""
    rows = []
    for run in evaluation.runs:
        row: dict[str, Any] = {"run": run.source, "format": run.format, "model": run.model,
                               "priced as": run.priced_as or UNKNOWN_NOTE, "calls": run.calls,
                               "saving against": run.baseline}
        for result in run.policies:  # (an empty cell where the price is unknown: never a number made up)
            row[f"cost {result.row.policy} (US$)"] = rounded(result.row.cost, 4)
            if result.row.policy != "none":
                row[f"saving {result.row.policy} (US$)"] = rounded(result.saving, 4)
        rows.append(row)
    return rows


def _on_select() -> None:
    chosen = st.session_state[state.CORPUS_TABLE]["selection"]["rows"]
    evaluation = st.session_state.get(state.CORPUS_RESULT)
    if chosen and evaluation is not None:
        _open(evaluation.runs[chosen[0]].source)


def _distributions(evaluation: Evaluation) -> None:
    table = evaluation.table()
    one, two = st.columns(2)
    saving = ("Saving per run (US$): the baseline's cost (the run as it ran where the agent cut its own context, "
              "else no policy) minus the policy's")
    for column, field, title in ((one, "saving", saving),
                                 (two, "cost", "Cost per run (US$)")):
        policies = len({row["strategy"] for row in table})
        chart = alt.Chart(alt.Data(values=table)).mark_boxplot(extent="min-max").encode(
            x=alt.X(f"{field}:Q", title=f"{field} (US$)"), y=alt.Y("strategy:N", sort=None, title="policy"),
            color=alt.Color("strategy:N", legend=None)).properties(height=60 + 40 * policies)
        column.caption(title)
        column.altair_chart(chart, width="stretch")


def _grid(threshold: int) -> Grid:
    """The thresholds the page sweeps: 0 to 150,000 in steps of 10,000, and the sidebar's own."""
    values = sorted({*range(0, 150_001, 10_000), threshold})
    return Grid.parse([f"threshold={','.join(map(str, values))}"])


def _pareto(tuned: dict[str, Any], threshold: int) -> None:
    [rules] = tuned["strategies"]
    best = rules["best"]
    if not tuned["runs"] or best is None:  # every run's price unknown: no cost to tune by
        st.caption(f"No run of the corpus has a known price ({UNKNOWN_NOTE}), so there is no cost to tune the "
                   "threshold by.")
        return
    points = [{"threshold": p["params"]["threshold"], "cost": p["cost"],
               "mark": "cheapest" if p == best else "yours" if p["params"]["threshold"] == threshold else ""}
              for p in rules["points"]]
    base = alt.Chart(alt.Data(values=points)).encode(
        x=alt.X("threshold:Q", title="threshold (tokens)"),
        y=alt.Y("cost:Q", title="whole-corpus cost (US$)", scale=alt.Scale(zero=False)),
        tooltip=["threshold:Q", "cost:Q"])
    marked = base.transform_filter("datum.mark != ''").mark_point(size=300, shape="diamond", filled=True).encode(
        color=alt.Color("mark:N", title=None, scale=alt.Scale(domain=["cheapest", "yours"],
                                                             range=["#d62728", "#1f77b4"])))
    st.altair_chart(base.mark_line(point=True, color="#888") + marked, width="stretch")
    yours = next((p for p in rules["points"] if p["params"]["threshold"] == threshold), None)
    st.caption(f"The rules policy's whole-corpus cost at each threshold (`tune`): the cheapest is "
               f"{best['params']['threshold']:,} tokens at ${best['cost']:,.4f}"
               + (f"; your threshold, {threshold:,}, costs ${yours['cost']:,.4f}" if yours else "")
               + ". A cheaper threshold can hide more that the agent then used: *Compare* and `tune --json` give "
                 "the hidden-then-used calls beside each cost.")


def panel(rules: Rules, settings: Settings, summary: SummarySettings | None) -> None:
    """The Corpus tab."""
    limit_mb, problem = state.input_limit()
    if problem:
        st.warning(literal(problem), icon=":material/warning:")
    st.file_uploader("Upload a .zip or .tar.gz of logs, or several log files", type=UPLOAD_TYPES,
                     accept_multiple_files=True, key=state.CORPUS_UPLOAD, max_upload_size=limit_mb,
                     help=f"Any mix of the formats the Conversation tab reads, in archives or not. Up to {limit_mb:,} "
                          "MB per file and for all of them together (the input limit); files that are not "
                          "conversations are listed as skipped.")
    st.multiselect("Policies", list(POLICIES), default=DEFAULT_POLICIES, key=state.CORPUS_POLICIES,
                   help="Each run is replayed under each of these, with the sidebar's rules and settings.")
    if st.button("Evaluate the corpus", type="primary", disabled=not st.session_state.get(state.CORPUS_UPLOAD)):
        _evaluate(rules, settings, summary)  # here, not in a callback: the progress bar shows in its place
    if st.session_state.get(state.CORPUS_MESSAGE):
        st.error(literal(st.session_state[state.CORPUS_MESSAGE]), icon=":material/error:")
    evaluation: Evaluation | None = st.session_state.get(state.CORPUS_RESULT)
    if evaluation is None:
        return
    st.caption(f"{plural(len(evaluation.runs), 'run')} evaluated, {len(evaluation.failed):,} failed, "
               f"{len(evaluation.skipped):,} skipped. Select a run to open it in the other tabs; click a column to "
               "sort.")
    rows = _rows(evaluation)
    money = sorted({name for row in rows for name in row if name.endswith("(US$)")})
    st.dataframe(rows, hide_index=True, width="stretch", key=state.CORPUS_TABLE, on_select=_on_select,
                 selection_mode="single-row", column_config={**widgets.counts("calls"), **widgets.dollars(*money)})
    for failed in evaluation.failed:
        st.warning(literal(failed.message), icon=":material/error:")
    if evaluation.skipped:
        with st.expander(f"Skipped ({len(evaluation.skipped):,})"):
            for skipped in evaluation.skipped:
                st.caption(literal(f"{skipped.source}: {skipped.reason}"))
    if evaluation.runs:
        _distributions(evaluation)
    if st.session_state.get(state.CORPUS_TUNED) and st.session_state[state.CORPUS_TUNED]["runs"]:
        _pareto(st.session_state[state.CORPUS_TUNED], settings.threshold)
    st.download_button("Download the table (CSV)", evaluation.csv(), "corpus.csv", "text/csv", on_click="ignore",
                       help="One row per run and policy: tokens billed, cached, cost, saving, lost, retrievable, "
                            "errors kept, pairs intact.")
