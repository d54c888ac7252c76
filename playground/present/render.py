"""HTML for the two custom visuals: the token meters and the aligned before/after rows.

Pure functions from view values to escaped HTML, so they are tested without a browser. Long
texts are cut to a preview and a capped full view, so nothing renders unboundedly.
"""

from __future__ import annotations

import re
from html import escape

from .view import Row, Scale

PREVIEW_CHARS = 180
NEAR_MARKS = 30  # % of the meter's width: two marks' labels closer than this would print over each other
FULL_CHARS = 6_000

STYLE = """
<style>
.cp-meter{position:relative;margin:.25rem 0 .6rem 0;padding-bottom:1.3rem;font-size:.85rem}
.cp-track{position:relative;height:1.6rem;background:#f0f2f6;border-radius:.3rem;margin:.3rem 0}
.cp-bar{position:absolute;left:0;top:0;bottom:0;border-radius:.3rem}
.cp-before{background:#9aa5b8}.cp-after{background:#3b82f6}
.cp-summary{background:repeating-linear-gradient(135deg,#a78bfa 0 .5rem,#c4b5fd .5rem 1rem)}
.cp-label{position:absolute;left:.5rem;top:.2rem;white-space:nowrap;color:#111;font-weight:600}
.cp-mark{position:absolute;top:0;bottom:1.3rem;border-left:2px dashed #d9480f}
.cp-window{border-left:2px solid #111}
.cp-marklabel{position:absolute;top:100%;margin-top:.15rem;transform:translateX(-50%);white-space:nowrap;
font-size:.75rem;color:#d9480f}
.cp-window .cp-marklabel{color:#111}
.cp-marklabel.cp-end{transform:translateX(-100%)}
.cp-meter.cp-two{padding-bottom:2.5rem}.cp-two .cp-mark{bottom:2.5rem}.cp-two .cp-mark.cp-low{bottom:1.3rem}
.cp-offscale{text-align:right;font-size:.75rem;color:#555}
table.cp-rows{width:100%;border-collapse:collapse;table-layout:fixed;font-size:.82rem}
.cp-rows th{text-align:left;border-bottom:2px solid #ccc;padding:.3rem}
.cp-rows td{vertical-align:top;border-bottom:1px solid #e6e6e6;padding:.3rem;overflow-wrap:anywhere}
.cp-rows tr.cp-changed td{background:#eefaf0}
.cp-rows tr.cp-skipped td.cp-why{background:#fff8e6}
.cp-rows tr.cp-boundary td{border-top:3px solid #d9480f}
.cp-who{font-weight:600}.cp-where{color:#666;font-size:.75rem}
.cp-tok{display:flex;align-items:center;gap:.4rem;font-variant-numeric:tabular-nums;color:#333}
.cp-tokbar{height:.45rem;background:#9aa5b8;border-radius:.2rem;min-width:1px}
.cp-changed .cp-after-col .cp-tokbar{background:#16a34a}
.cp-rows details summary{cursor:pointer;white-space:pre-wrap}
.cp-rows pre{white-space:pre-wrap;margin:.3rem 0;font-size:.78rem;max-height:22rem;overflow:auto}
.cp-rows tr.cp-folded td{background:#f3efff}.cp-sum{color:#5b21b6}
.cp-rule{color:#166534}.cp-skip{color:#92400e}.cp-cache{color:#d9480f;font-weight:600}
.cp-used{color:#b91c1c;font-weight:600}
</style>
"""


_INLINE_MARKUP = re.compile(r"[\\`*_\[\]<>$~|&]")
# Streamlit replaces `:smile:` and `:material/bug:` in the text after Markdown has read it, so a
# backslash cannot stop them: an invisible WORD JOINER after the colon does.
_SHORTCODE = re.compile(r":(?=[\w/])")
WORD_JOINER = "\u2060"
_LINE_MARKUP = re.compile(r"^(\s*(?:\d+)?)([#>+\-=.)])", re.MULTILINE)  # headings, quotes, lists: "- ", "1. "


def literal(text: str) -> str:
    """``text`` escaped for Streamlit's Markdown, so it shows exactly as typed.

    Messages quote what a person supplied (a template such as ``{query.__class__}``, a file name,
    a tool name); unescaped, ``__class__`` turns bold, ``:red[x]`` turns red and ``$x$`` becomes
    maths. CommonMark lets any ASCII punctuation be backslash-escaped, so escaping every character
    Markdown gives meaning to (and line starts that make lists or headings) is safe and leaves plain
    prose readable; emoji and icon shortcodes get an invisible word joiner after their colon.
    Newlines become hard line breaks.
    """
    escaped = _INLINE_MARKUP.sub(lambda match: "\\" + match.group(0), text)
    escaped = _SHORTCODE.sub(":" + WORD_JOINER, escaped)
    escaped = _LINE_MARKUP.sub(lambda match: match.group(1) + "\\" + match.group(2), escaped)
    return escaped.replace("\n", "  \n")


def _tokens(value: int) -> str:
    return f"{value:,}"


def meters(view: Scale, before: int, after: int, threshold: int, compacted: int | None = None) -> str:
    """Before and after bars on one scale, with the threshold and context window marked. With
    ``compacted`` (a summary went further), three bars: before, after compaction (retrievable)
    and after summarization (lossy), so the summary's cut is never read as compaction's."""
    def mark(css: str, where: float, text: str) -> str:
        end = " cp-end" if where > 85 else ""  # labels near the right edge hang to the left of their line
        return (f'<div class="cp-mark{css}" style="left:{where}%"><span class="cp-marklabel{end}">{text}</span>'
                "</div>")

    marks = [mark("", view.threshold, f"threshold {_tokens(threshold)}")]
    # two labels closer than a label's width would print over each other: the window's then takes a row of its own
    near = view.window is not None and abs(view.window - view.threshold) < NEAR_MARKS
    if view.window is not None:
        marks.append(mark(" cp-window" + (" cp-low" if near else ""), view.window,
                          f"context window {_tokens(view.window_tokens)}"))
    off = "" if view.window is not None or view.window_tokens is None else (
        f'<div class="cp-offscale">context window {_tokens(view.window_tokens)} → far to the right, off this scale'
        "</div>")
    bars = [_bar_track("cp-before", view.before, f"before: {_tokens(before)} tokens")]
    if compacted is None or view.compacted is None:
        bars.append(_bar_track("cp-after", view.after, f"after: {_tokens(after)} tokens"))
    else:
        bars += [_bar_track("cp-after", view.compacted, f"after compaction: {_tokens(compacted)} tokens (retrievable)"),
                 _bar_track("cp-summary", view.after, f"after summarization: {_tokens(after)} tokens (lossy)")]
    return (f'<div class="cp-meter{" cp-two" if near else ""}" role="img" aria-label="token meters">' + "".join(bars)
            + "".join(marks) + "</div>" + off)


def _bar_track(css: str, width: float, label: str) -> str:
    return (f'<div class="cp-track"><div class="cp-bar {css}" style="width:{width}%"></div>'
            f'<span class="cp-label">{escape(label)}</span></div>')


def _text_cell(text: str) -> str:
    """A preview that opens to the full text (capped), or the whole text when it is short."""
    if len(text) <= PREVIEW_CHARS:
        return f"<div>{escape(text) or '<i>(no text)</i>'}</div>"
    shown = text[:FULL_CHARS]
    rest = len(text) - len(shown)
    cut = f"\n… {rest:,} more characters not shown" if rest else ""
    return (f"<details><summary>{escape(text[:PREVIEW_CHARS])}…</summary>"
            f"<pre>{escape(shown)}{escape(cut)}</pre></details>")


def _bar(tokens: int, largest: int) -> str:
    width = 0 if largest <= 0 else max(1, round(120 * tokens / largest))
    return f'<div class="cp-tok"><div class="cp-tokbar" style="width:{width}px"></div>{_tokens(tokens)}</div>'


def rows_table(rows: list[Row], largest: int) -> str:
    """The aligned rows: original on the left, compacted on the right, what happened last."""
    if not rows:
        return "<p>No items to show.</p>"
    body = []
    for row in rows:
        flags = (("cp-changed", row.changed and not row.summarized), ("cp-folded", row.summarized),
                 ("cp-skipped", bool(row.skipped)), ("cp-boundary", row.cache_boundary))
        classes = " ".join(name for name, on in flags if on)
        who = escape(row.role + (f" · {row.tool}" if row.tool else ""))
        notes = [f'<div class="cp-rule">✂ {escape(rule)}</div>' for rule in row.rules]
        notes += [f'<div class="cp-skip">⊘ kept: {escape(reason)}</div>' for reason in row.skipped]
        if row.summarized:
            notes.append('<div class="cp-sum">⤵ folded into the summary: lossy, a tool call cannot bring it back'
                         "</div>" if row.after else '<div class="cp-sum">⤵ folded into the summary above</div>')
        if row.cache_boundary:
            notes.append('<div class="cp-cache">⟂ prompt cache ends here: this is the first changed item</div>')
        notes += [f'<div class="cp-used">▲ hidden, then used by this call\'s reply: “{escape(span[:120])}”</div>'
                  for span in row.used]
        if row.summarized:
            after = _text_cell(row.after) if row.after else ""
        elif row.changed:
            after = _text_cell(row.after)
        else:
            after = '<div class="cp-where">unchanged</div>'
        body.append(
            f'<tr class="{classes}"><td><div class="cp-who">{who}</div>'
            f'<div class="cp-where">#{row.position} · {escape(row.location)}</div></td>'
            f"<td>{_bar(row.tokens_before, largest)}{_text_cell(row.before)}</td>"
            f'<td class="cp-after-col">{_bar(row.tokens_after, largest)}{after}</td>'
            f'<td class="cp-why">{"".join(notes)}</td></tr>'
        )
    head = ('<table class="cp-rows"><colgroup><col style="width:14%"><col style="width:36%">'
            '<col style="width:30%"><col style="width:20%"></colgroup>'
            "<thead><tr><th>item</th><th>before</th><th>after</th><th>what happened</th></tr></thead><tbody>")
    return head + "".join(body) + "</tbody></table>"
