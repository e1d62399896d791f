"""Markdown pieces shared by the PR comment and the job summary: marks, escaping, tables, counts."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from bot.cells import BACKENDS, SHAPES
from bot.diff.groups import Group, Hint
from bot.diff.hints import known_hint
from bot.diff.model import CATEGORIES, CellLine, Report
from bot.outcomes import STAGES, WEAK_COMPARED
from bot.report.groups import extent

VERSIONS = 20  # versions the footer names; a report may carry more
VERDICT_ICON = {"success": "✅", "failure": "❌", "neutral": "⚠️"}
STATUS_ORDER = ("passed", "passed-uncompared", "failed", "error", "skipped", "not-buildable")
# Marks per outcome; `error` splits by kind below (crash and timeout are infrastructure).
NOT_BUILDABLE_MARK = "🚧"
MARK = {"passed": "✅", "passed-uncompared": "✅", "failed": "❌", "skipped": "⏭️", "not-buildable": NOT_BUILDABLE_MARK}
# A pass that compared only output names or counts (or nothing: every component hit a runtime limit).
WEAK_MARK = "☑️"
WEAK_LEGEND = (
    "☑️ passed on a weak check: output names only (ONNX/OpenVINO generate), the output count only "
    "(ExecuTorch), or nothing (every component hit an ExecuTorch runtime limit, or the checkout's test "
    "tolerated one and never ran the program)"
)
TITLES = {
    "newly_broken": "Newly broken",
    "new_failing": "New failing (no base result)",
    "flaky": "Flaky (a re-run disagreed, or the cell flips on main)",
    "newly_passing": "Newly passing",
    "obsolete_skip": "Obsolete skips (skiplisted, passed in probe)",
    "new_passing": "New passing (no base result)",
    "broken_trunk": "Failing on main too (in main's newest results)",
    "still_failing": "Pre-existing failures (failing on the base too)",
    "newly_skipped": "Newly skipped",
    "missing": "Missing (selected, no result in this run)",
    "not_run": "Not run (in the baseline, not in this run)",
    "not_buildable": "Not buildable by this source",
}


def mark(line: CellLine, flaky: bool = False) -> str:
    if flaky:
        return "⚠️"
    if line.status == "error":
        return "💥" if line.kind in ("crash", "timeout") else "⚠️"
    if line.status == "passed" and line.compared:
        return WEAK_MARK
    return MARK.get(line.status, "·")


def weak_passes(report: Report) -> str | None:
    """`☑️ 12 passes compared only output names or counts (…)`: the comment's legend line, when any did."""
    by_kind: dict[str, int] = {}
    for line in report.cells:
        if line.status == "passed" and line.compared:
            by_kind[line.compared] = by_kind.get(line.compared, 0) + 1
    if not by_kind:
        return None
    parts = [f"{words} ({by_kind[kind]:,})" for kind, words in WEAK_COMPARED.items() if by_kind.get(kind)]
    total = sum(by_kind.values())
    return f"{WEAK_MARK} {n(total, 'pass', 'passes')} on a weak check, compared " + ", ".join(parts) + "."


# Report strings come from code the pull request controls (docs/reports.md): each reaches the
# markdown through `escape` (text) or `code` (a code span), never raw.
_ZWSP = "\u200b"  # invisible: breaks a mention, a reference or an autolink without changing what a reader sees
# Backslash and ampersand first: the escapes below add both. Chained `replace` is several times
# faster than `translate` with a mapping, and a full sweep's summary escapes 100,000 strings.
_TEXT = (
    ("\\", "\\\\"),
    ("&", "&amp;"),
    ("<", "&lt;"),
    (">", "&gt;"),
    ("|", "\\|"),
    ("`", "\\`"),
    ("[", "\\["),
    ("]", "\\]"),
    ("@", "@" + _ZWSP),
    ("\n", " "),
    ("\r", " "),
)
# What GitHub links inside plain text: bare URLs, www. hosts, and issue references (#12, owner/repo#12).
_AUTOLINK = re.compile(r"(?i)(?<=:)(?=//)|(?<=www)(?=\.)|(?<=#)(?=\d)")
_SPECIAL = re.compile("[" + re.escape("".join(old for old, _ in _TEXT)) + "]")
# An HTML comment's delimiters, even inside a code span: the run marker is a comment, and a
# reader of the raw body must never find one the bot did not write.
_COMMENT = re.compile(r"<(?=!--)|-(?=->)")
# What makes a line a heading, quote, list or rule when it starts it: escaped at a sentence's start.
_BLOCK_START = re.compile(r"^[#>+=*~_-]|^\d{1,9}(?=[.)])")
_LINK_TARGET = re.compile(r"https://[A-Za-z0-9.-]+(?::\d+)?/[A-Za-z0-9._~/?#=&+,:-]*")


def escape(text: str) -> str:
    """Any string from a report as inert text: no mention, HTML, link, image, code span, table cell or new line."""
    text = str(text)
    if _SPECIAL.search(text):
        for old, new in _TEXT:
            text = text.replace(old, new)
    return _AUTOLINK.sub(_ZWSP, text)


def code(text: str, *, table: bool = False) -> str:
    """A string from a report as one code span (nothing inside is markup); `table`: its pipes stay in the cell.

    A backtick inside would end the span, so it becomes a quote; a new line, a space.
    """
    inner = str(text).replace("`", "'").replace("\n", " ").replace("\r", " ")
    if "<!" in inner or "->" in inner:
        inner = defuse(inner)
    inner = inner or " "
    if table:
        inner = inner.replace("|", "\\|")  # GitHub splits table cells before it parses code spans
    return f"`{inner}`"


def defuse(text: str) -> str:
    """Literal text (a code span's, a code block's) with every HTML comment delimiter broken by an invisible space."""
    return _COMMENT.sub(lambda m: m.group() + _ZWSP, text)


def link(text: str, url: str | None, within: str | None) -> str:
    """`[text](url)` when the URL points under `within` (the repository's or the docs' address); else text and the URL as code.

    `text` is markdown the caller made safe; the URL is a report's, so it may be anything.
    """
    if not url:
        return text
    if points_into(url, within):
        return f"[{text}]({url})"
    return f"{text} ({code(cut(url, 200))})"


def repository_of(report: Report, given: str | None) -> str | None:
    """Where links may point: the publisher's own repository address, else the report's when it is on github.com."""
    if given:
        return given
    found = report.repository_url
    return found if found and found.startswith("https://github.com/") else None


def points_into(url: str | None, within: str | None) -> bool:
    """The URL is plain (no space, quote, parenthesis or escape) and stays under `within/` (no `.` or `..` step)."""
    prefix = within.rstrip("/") + "/" if within else ""
    if not (url and prefix and url.startswith(prefix) and _LINK_TARGET.fullmatch(url)):
        return False
    path = url[len(prefix) :].partition("#")[0].partition("?")[0]
    return not any(step in (".", "..") for step in path.split("/"))


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def n(count: int, noun: str, plural: str | None = None) -> str:
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def counts_table(counts: Mapping[str, Mapping[str, int]]) -> list[str]:
    """Backend rows × shape columns, each cell a short tally of marks.

    The table's size comes from the matrix (bot/cells.py), never from the report's keys: a
    report's own keys are only looked up, so a hostile one cannot make the table grow. Cells on
    a backend the bot does not know, or on none (a checkout's own test, docs/cells.md), are summed
    into one `other` row, under their shape or in an `other` column: the table then adds up to
    the totals line, and its size is still fixed.
    """
    other = _other_counts(counts)
    backends = [b for b in BACKENDS if any(f"{b}/{s}" in counts for s in SHAPES)]
    shapes = [s for s in SHAPES if any(f"{b}/{s}" in counts for b in BACKENDS) or other.get(s)]
    shapes += ["other"] if other.get("other") else []
    if not backends and not other:
        return ["_No cells ran._"]
    rows = ["| backend | " + " | ".join(shapes) + " |", "|---|" + "---|" * len(shapes)]
    for backend in backends:
        tallies = [tally(counts.get(f"{backend}/{shape}", {})) for shape in shapes]
        rows.append(f"| {backend} | " + " | ".join(tallies) + " |")
    if other:
        rows.append("| other | " + " | ".join(tally(other.get(shape, {})) for shape in shapes) + " |")
    return rows


def _other_counts(counts: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, int]]:
    """The counts of every key off the bot's backends, summed per shape (`other` when it has none the bot knows)."""
    known = {f"{b}/{s}" for b in BACKENDS for s in SHAPES}
    summed: dict[str, dict[str, int]] = {}
    for key, by_status in counts.items():
        if key in known:
            continue
        shape = key.rpartition("/")[2]
        column = summed.setdefault(shape if shape in SHAPES else "other", {})
        for status, count in by_status.items():
            if isinstance(count, int):
                column[status] = column.get(status, 0) + count
    return {shape: column for shape, column in summed.items() if any(column.values())}


def tally(by_status: Mapping[str, int]) -> str:
    passed = by_status.get("passed", 0) + by_status.get("passed-uncompared", 0)
    parts = [
        ("✅", passed),
        ("❌", by_status.get("failed", 0)),
        ("💥", by_status.get("error", 0)),
        ("⏭️", by_status.get("skipped", 0)),
        (NOT_BUILDABLE_MARK, by_status.get("not-buildable", 0)),
    ]
    return " ".join(f"{m} {c:,}" for m, c in parts if c) or "–"


def totals(report: Report) -> str:
    summed: dict[str, int] = {}
    for by_status in report.counts.values():
        for status, count in by_status.items():
            summed[status] = summed.get(status, 0) + count
    total = sum(summed.values())
    parts = [f"{summed[s]:,} {s}" for s in STATUS_ORDER if summed.get(s)]
    return f"{n(total, 'cell')}: " + ", ".join(parts) if total else "No cells ran."


def overview(report: Report, names: Iterable[str]) -> str:
    """`newly broken **3** · newly passing **1** · …`: the count of every category that has cells."""
    parts = [f"{name.replace('_', ' ')} **{len(report.category(name)):,}**" for name in names if report.category(name)]
    return " · ".join(parts) if parts else "No cell changed category."


def counts_section(report: Report) -> list[str]:
    """The totals, the backend × shape table and the count of each category, a blank line before each."""
    if report.no_cells:  # cells were expected and none came: said in its own section, never "no cells ran"
        return ["", overview(report, CATEGORIES)]
    return ["", totals(report), "", *counts_table(report.counts), "", overview(report, CATEGORIES)]


def not_buildable_lines(report: Report, classes: int = 5, reasons: int | None = None) -> list[str]:
    """`🚧 N cells not buildable by this source`, then one line per reason naming a few classes."""
    groups = report.not_buildable
    if not groups:
        return []
    total = sum(group.cells for group in groups)
    out = [
        f"{NOT_BUILDABLE_MARK} {n(total, 'cell')} not buildable by this source "
        "(not run: no verdict, never proposed as skips):"
    ]
    shown = groups if reasons is None else groups[:reasons]
    for group in shown:
        names = ", ".join(code(c) for c in group.classes[:classes])
        if len(group.classes) > classes:
            names += f" and {len(group.classes) - classes:,} more"
        out.append(f"- {escape(cut(group.reason, 200))} ({n(group.cells, 'cell')}): {names}")
    if len(shown) < len(groups):
        out.append(f"- …and {n(len(groups) - len(shown), 'more reason')} in report.json")
    return out


def baseline_line(report: Report) -> str | None:
    """`Baseline: main@`abc1234`, 4 commits behind the merge base; 3 cells older than 7 days.` (a per-commit baseline)."""
    age = report.baseline_age
    if age is None:
        return None
    if age.newest is None:
        text = "Baseline: main's history holds no result of these cells"
    else:
        text = f"Baseline: main@{code(age.newest[:7])}"
        if not age.merge_base_known:
            why = "no merge base given"
            if age.merge_base:
                why = f"the merge base {code(age.merge_base[:7])} is not in the baseline's history"
            text += f", main's newest results ({why})"
        elif age.behind is None:
            # Results at commits the chain does not hold (replaced by a force-push, or a gap) count as
            # older than every chain commit: how far behind they are is unknown, never "at".
            text += (
                f", a commit not in main's recorded history, behind the merge base {code((age.merge_base or '')[:7])}"
            )
        elif age.behind:
            text += f", {n(age.behind, 'commit')} behind the merge base {code((age.merge_base or '')[:7])}"
        else:
            text += ", at the merge base"
    if age.old_cells:
        text += f"; {n(age.old_cells, 'cell')} older than {age.stale_days:g} days"
    return text + "."


def baseline_lines(report: Report) -> list[str]:
    """What the head was judged against: that there was no baseline, or how old main's per-commit one is."""
    out = [] if report.baseline else ["No baseline: judged against the head's skiplists alone."]
    age = baseline_line(report)
    return [*out, age] if age else out


def flaky_note(line: CellLine, window: int | None) -> str:
    """` (flaky on main: flipped 2× in its last 10 results)` for a cell main's history shows flipping."""
    if not line.flips:
        return ""
    within = f" in its last {window:,} results" if window else ""
    return f" (flaky on main: flipped {line.flips:,}×{within})"


def short_sha(sha: str | None) -> str:
    return code(sha[:12]) if sha else "unknown"


def sentence(text: str) -> str:
    """A report's one-line reason as a sentence of its own: capitalized, escaped, never a heading or a list."""
    text = escape(cut(text, 1000))
    text = text[:1].upper() + text[1:]
    # `#`, `-`, `>`, `1.` … (escaped after the digits) would make the line a heading, list, quote or rule.
    return _BLOCK_START.sub(lambda m: m.group() + "\\" if m.group()[0].isdigit() else "\\" + m.group(), text) + "."


def tested_line(report: Report) -> str | None:
    """`Tested transformers 5.24.0.dev0 from /path (checkout abc1234).`; None when the JUnit did not say."""
    p = report.provenance
    if not p.known:
        return None
    text = f"Tested transformers {escape(cut(p.transformers_version or '(version unknown)', 100))}"
    if p.transformers_location:
        text += f" from {escape(cut(p.transformers_location, 300))}"
    if p.transformers_sha:
        shas = escape(" / ".join(sha[:7] for sha in p.transformers_sha.split(" / ")[:5]))
        text += f" (checkout {shas})"
    elif p.transformers_location:
        text += " (not a git checkout)"
    text += "."
    if p.disagree:
        fields = escape(", ".join(name.replace("transformers_", "") for name in p.disagree[:5]))
        text += f" ⚠️ The shards disagree on the {fields}."
    return text


def judged_line(report: Report) -> str | None:
    """`Judged by the checkout's tests/exporters/test_export.py.` or the bot's rules profile; None when unsaid."""
    said = []
    for judge in report.judged_by:
        kind, _, name = judge.partition(":")
        if kind == "checkout":
            said.append(f"the checkout's {escape(cut(name, 200))}")
        else:
            said.append(f"the bot's rules profile {code(cut(judge, 60))}")
    return f"Judged by {' and '.join(said)}." if said else None


def footer(report: Report, repository: str | None, *, elapsed: float | None = None) -> list[str]:
    """Commits, judges, cost, versions and the run's link; `elapsed`: seconds from the push to this comment."""
    base = short_sha(report.base_sha) if report.baseline else "none (no baseline)"
    lines = [f"Base {base} → head {short_sha(report.head_sha)}."]
    if report.tested_sha and report.tested_sha != report.head_sha:
        lines.append(
            f"Tested the merge {short_sha(report.tested_sha)} = "
            f"base@{short_sha(report.base_sha)} + head@{short_sha(report.head_sha)}."
        )
    tested = tested_line(report)
    if tested:
        lines.append(tested)
    judged = judged_line(report)
    if judged:
        lines.append(judged)
    said = cost_line(report, elapsed)
    if said:
        lines.append(said)
    if report.versions:
        shown = list(report.versions.items())[:VERSIONS]
        lines.append("Versions: " + ", ".join(f"{escape(cut(k, 60))} {escape(cut(v, 60))}" for k, v in shown) + ".")
    if report.run_url:
        lines.append(link("Run and job summary", report.run_url, repository) + ".")
    return lines


def cost_line(report: Report, elapsed: float | None = None) -> str | None:
    """`Cost: 40 cells, 12 min of cell time (CPU: dynamo 3 min, onnx 9 min) on 4 shards; 20 min from push to comment.`

    Cell time is the cells' durations summed (workers counted apart); CPU is the workers' CPU time
    while each backend's cells ran; shards are the JUnit files the head was read from. A run whose
    JUnit timed nothing says nothing of its cell time.
    """
    parts = []
    if report.cell_seconds and report.cells:
        spent = [(name, s) for name, s in report.backend_seconds.items() if s > 0][:_COST_BACKENDS]
        each = f" (CPU: {', '.join(f'{escape(name)} {minutes(s)}' for name, s in spent)})" if spent else ""
        parts.append(f"{n(len(report.cells), 'cell')}, {minutes(report.cell_seconds)} of cell time{each}")
        shards = len(report.files.get("head", ()))
        parts[-1] += f" on {n(shards, 'shard')}" if shards > 1 else ""
    if elapsed is not None and elapsed >= 0:
        parts.append(f"{minutes(elapsed)} from push to comment")
    return f"Cost: {'; '.join(parts)}." if parts else None


_COST_BACKENDS = 8  # backends named in the cost line; a forged report may name 64


def minutes(seconds: float) -> str:
    """`42 s`, `12 min`, `3.5 h`: a run's cost at a glance."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def the_cells(count: int) -> str:
    """A failure group's `<details>` summary."""
    return "The cell" if count == 1 else f"The {count:,} cells"


def drift_section(report: Report, limit: int, *, name=code) -> list[str]:
    """The cells whose figures moved against their base, folded: one row per figure (docs/diff.md, Drift).

    `name(cell, table=True)` names a cell (the comment's links it to the dashboard).
    """
    from bot.diff.drift import describe

    if not report.drift:
        return []
    cells = len({line.cell for line in report.drift})
    effect = "the verdict counts them (drift-fails)" if report.drift_fails else "the verdict leaves them out"
    out = [f"<details><summary>📈 {n(cells, 'cell')} drifted: figures moved against the base; {effect}</summary>", ""]
    out += ["| cell | what moved |", "|---|---|"]
    out += [f"| {name(line.cell, table=True)} | {escape(describe(line))} |" for line in report.drift[:limit]]
    if len(report.drift) > limit:
        out.append(f"| … | {n(len(report.drift) - limit, 'more figure')} in report.json |")
    return [*out, "", "</details>"]


def cause_heading(index: int, group: Group) -> str:
    """`**1. `Signature`** at stage `export`: 4 cells, 1 class × torch static, dynamic`."""
    where = f" at stage `{group.stage}`" if group.stage in STAGES else ""
    if group.stage and not where:  # an error kind: crash, timeout, harness, build
        where = f" ({code(cut(group.stage, 40))})"
    # No stage at all (a checkout's test whose frames do not say): the signature names the exception, the culprit its frame.
    return (
        f"**{index}. {code(cut(group.signature, 300))}**{where}: {n(len(group.cells), 'cell')}, {extent(group.cells)}"
    )


def cause_lines(group: Group, excerpt: int, repository: str | None) -> list[str]:
    """The representative excerpt, the culprit line (or that there is none), the hint and the repro."""
    out = []
    if excerpt and group.excerpt:
        out.append(f"> {code(cut(group.representative, 200))}: {escape(cut(group.excerpt, excerpt))}")
        out.append("")
    culprit = group.culprit
    if culprit is None:
        out.append("- 📍 No frame of the repository under test (`src/transformers/`) in the traceback.")
    else:
        text = f"- 📍 {link(code(cut(culprit.where, 200)), culprit.url, repository)}"
        if culprit.changed:
            text += " **changed in this PR**"
        if culprit.source:
            text += f": {code(cut(culprit.source, 160))}"
        out.append(text)
    if group.hint is not None:
        out.append(f"- 💡 {hint_line(group.hint)}")
    if group.test_repro:
        bot = f"; this cell alone: {code(cut(group.repro, 300))}" if group.repro else ""
        out.append(f"- 🔁 Reproduce: {code(cut(group.test_repro, 300))} (the checkout's test){bot}")
    elif group.repro:
        out.append(f"- 🔁 Reproduce: {code(cut(group.repro, 300))}")
    return out


def hint_line(hint: Hint) -> str:
    """The bot's own hint (its markdown and docs link from hints.toml) when the id is one it ships; else inert text."""
    own = known_hint(hint.id)
    if own is None:
        return escape(cut(hint.text, 300))
    return own.text + (f" ([docs]({own.link}))" if own.link else "")
