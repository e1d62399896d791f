"""Markdown pieces shared by the PR comment and the job summary: marks, escaping, tables, counts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from bot.diff.groups import Group
from bot.diff.model import CellLine, Report
from bot.outcomes import STAGES
from bot.report.groups import extent

VERDICT_ICON = {"success": "✅", "failure": "❌", "neutral": "⚠️"}
STATUS_ORDER = ("passed", "passed-uncompared", "failed", "error", "skipped", "not-buildable")
# Marks per outcome; `error` splits by kind below (crash and timeout are infrastructure).
NOT_BUILDABLE_MARK = "🚧"
MARK = {"passed": "✅", "passed-uncompared": "✅", "failed": "❌", "skipped": "⏭️", "not-buildable": NOT_BUILDABLE_MARK}
# A pass that compared only output names or counts (or nothing: every component hit a runtime limit).
WEAK_MARK = "☑️"
WEAK_LEGEND = (
    "☑️ passed on a weak check: output names only (ONNX/OpenVINO generate), the output count only "
    "(ExecuTorch), or nothing (every component hit an ExecuTorch runtime limit)"
)
TITLES = {
    "newly_broken": "Newly broken",
    "new_failing": "New failing (no base result)",
    "flaky": "Flaky (a re-run disagreed)",
    "newly_passing": "Newly passing",
    "obsolete_skip": "Obsolete skips (skiplisted, passed in probe)",
    "new_passing": "New passing (no base result)",
    "still_failing": "Pre-existing failures (failing on main too)",
    "newly_skipped": "Newly skipped",
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
    words = {"names": "output names only", "count": "the output count only", "none": "nothing"}
    parts = [f"{words[k]} ({by_kind[k]:,})" for k in ("names", "count", "none") if by_kind.get(k)]
    total = sum(by_kind.values())
    return f"{WEAK_MARK} {n(total, 'pass', 'passes')} on a weak check, compared " + ", ".join(parts) + "."


def escape(text: str) -> str:
    """Text from an error message made safe inside a table cell, without pinging anyone."""
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("|", "\\|")
        .replace("@", "&#64;")
        .replace("`", "&#96;")
    )


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def n(count: int, noun: str, plural: str | None = None) -> str:
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def counts_table(counts: Mapping[str, Mapping[str, int]]) -> list[str]:
    """Backend rows × shape columns, each cell a short tally of marks."""
    if not counts:
        return ["_No cells ran._"]
    backends = list(dict.fromkeys(key.partition("/")[0] for key in counts))
    shapes = list(dict.fromkeys(key.partition("/")[2] for key in counts))
    rows = ["| backend | " + " | ".join(shapes) + " |", "|---|" + "---|" * len(shapes)]
    for backend in backends:
        tallies = [tally(counts.get(f"{backend}/{shape}", {})) for shape in shapes]
        rows.append(f"| {backend} | " + " | ".join(tallies) + " |")
    return rows


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
        names = ", ".join(f"`{c}`" for c in group.classes[:classes])
        if len(group.classes) > classes:
            names += f" and {len(group.classes) - classes:,} more"
        out.append(f"- {escape(cut(group.reason, 200))} ({n(group.cells, 'cell')}): {names}")
    if len(shown) < len(groups):
        out.append(f"- …and {n(len(groups) - len(shown), 'more reason')} in report.json")
    return out


def short_sha(sha: str | None) -> str:
    return f"`{sha[:12]}`" if sha else "unknown"


def tested_line(report: Report) -> str | None:
    """`Tested transformers 5.24.0.dev0 from /path (checkout abc1234).`; None when the JUnit did not say."""
    p = report.provenance
    if not p.known:
        return None
    text = f"Tested transformers {p.transformers_version or '(version unknown)'}"
    if p.transformers_location:
        text += f" from {escape(p.transformers_location)}"
    if p.transformers_sha:
        shas = " / ".join(sha[:7] for sha in p.transformers_sha.split(" / "))
        text += f" (checkout {shas})"
    elif p.transformers_location:
        text += " (not a git checkout)"
    text += "."
    if p.disagree:
        fields = ", ".join(name.replace("transformers_", "") for name in p.disagree)
        text += f" ⚠️ The shards disagree on the {fields}."
    return text


def footer(report: Report) -> list[str]:
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
    if report.versions:
        lines.append("Versions: " + ", ".join(f"{k} {v}" for k, v in report.versions.items()) + ".")
    if report.run_url:
        lines.append(f"[Run and job summary]({report.run_url}).")
    return lines


def code(text: str) -> str:
    """Inline code that survives any text: backticks inside become quotes (a code span cannot escape them)."""
    return "`" + text.replace("`", "'").replace("\n", " ") + "`"


def the_cells(count: int) -> str:
    """A failure group's `<details>` summary."""
    return "The cell" if count == 1 else f"The {count:,} cells"


def cause_heading(index: int, group: Group) -> str:
    """`**1. `Signature`** at stage `export`: 4 cells, 1 class × torch static, dynamic`."""
    where = f"at stage `{group.stage}`" if group.stage in STAGES else f"(`{group.stage or 'unknown'}`)"
    return f"**{index}. {code(group.signature)}** {where}: {n(len(group.cells), 'cell')}, {extent(group.cells)}"


def cause_lines(group: Group, excerpt: int) -> list[str]:
    """The representative excerpt, the culprit line (or that there is none), the hint and the repro."""
    out = []
    if excerpt and group.excerpt:
        out.append(f"> {code(group.representative)}: {escape(cut(group.excerpt, excerpt))}")
        out.append("")
    culprit = group.culprit
    if culprit is None:
        out.append("- 📍 No frame of the repository under test (`src/transformers/`) in the traceback.")
    else:
        where = f"[{code(culprit.where)}]({culprit.url})" if culprit.url else code(culprit.where)
        text = f"- 📍 {where}"
        if culprit.changed:
            text += " **changed in this PR**"
        if culprit.source:
            text += f": {code(cut(culprit.source, 160))}"
        out.append(text)
    if group.hint is not None:
        link = f" ([docs]({group.hint.link}))" if group.hint.link else ""
        out.append(f"- 💡 {group.hint.text}{link}")
    if group.repro:
        out.append(f"- 🔁 Reproduce: {code(group.repro)}")
    return out
