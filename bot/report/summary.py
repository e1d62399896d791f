"""The job summary: headline, counts, every category, and the model class × cell grid."""

from __future__ import annotations

from bot import registry
from bot.cells import BACKENDS, Cell, CellIdError, placed
from bot.diff.model import CATEGORIES, CellLine, Report
from bot.report import markdown, reconciled

# The text helpers nearly every line calls, by name; the shared sections through `markdown.`.
from bot.report.markdown import TITLES, code, cut, escape, n

# GitHub rejects a step summary over 1 MiB; stay under it with room for other steps.
SUMMARY_LIMIT = 900_000
LEGEND = (
    "✅ passed · ☑️ passed on a weak check (output names or count only) · ❌ failed · "
    "💥 crashed or timed out · ⚠️ flaky or harness error · ⏭️ skipped · 🚧 not buildable by this source · "
    "🔓 skiplisted but passed in probe. Columns: {backends}; "
    "st/dyn = static/dynamic shapes; gen = generate; sc = static cache; xnn = XNNPACK."
)


def render_summary(report: Report, *, max_chars: int = SUMMARY_LIMIT, repository_url: str | None = None) -> str:
    """The full report for `$GITHUB_STEP_SUMMARY`; lists then grid rows shrink only past `max_chars`.

    Links are kept only into `repository_url` (else the report's): see `render_comment`.
    """
    grid = _grid(report)  # built once: the attempts below only cut it
    repository = markdown.repository_of(report, repository_url)
    items_of = _ItemLines(report)
    for items, rows in ((100_000, 100_000), (1_000, 100_000), (1_000, 2_000), (100, 500), (0, 0)):
        text = _compose(report, grid, items, rows, repository, items_of)
        if len(text) <= max_chars:
            return text
    kept = text[: max_chars - 80]
    return kept[: kept.rfind("\n") + 1] + "\n\n_Cut at the job summary limit; see report.json._\n"  # whole lines


def _compose(
    report: Report, grid: tuple[list[str], list[str]], items: int, rows: int, repository: str | None, items_of
) -> str:
    icon = markdown.VERDICT_ICON.get(report.verdict, "")
    out = [
        f"# {icon} Export conformance: {report.verdict}",
        "",
        markdown.sentence(report.headline),
    ]
    out += markdown.baseline_lines(report)
    for problem in report.problems[: max(items, 100)]:
        out.append(f"- ⚠️ {escape(cut(str(problem), 1000))}")
    out += _reconciliation(report)
    out += markdown.counts_section(report)
    if report.setup_headline:
        out.append(f"\n⚠️ {escape(cut(report.setup_headline, 2000))}; fix the checkout's test setup.")
    if markdown.weak_passes(report):
        out.append(f"\n{markdown.weak_passes(report)}")
    out.append("")
    drifted = markdown.drift_section(report, max(items, 100))
    out += [*drifted, ""] if drifted else []
    out += _causes(report, items, repository)
    for name in CATEGORIES:
        lines = report.category(name)
        if not lines or name == "new_passing":
            continue  # new passing cells are the grid's ✅ marks
        if name == "not_buildable":
            out += [f"<details><summary>{TITLES[name]} ({len(lines):,})</summary>", ""]
            out += markdown.not_buildable_lines(report, classes=max(items, 1))
            out += ["", "</details>", ""]
            continue
        out += [f"<details><summary>{TITLES[name]} ({len(lines):,})</summary>", ""]
        out += items_of(name, items)
        if len(lines) > items:
            out.append(f"- …and {n(len(lines) - items, 'more cell')} in report.json")
        out += ["", "</details>", ""]
    head, body = grid
    if head:
        out += head + body[:rows]
        if len(body) > rows:
            out.append(f"\n…and {n(len(body) - rows, 'more model class', 'more model classes')} in report.json.")
    out += ["", *markdown.footer(report, repository)]
    return "\n".join(out) + "\n"


def _reconciliation(report: Report) -> list[str]:
    """No cell at all, what to re-run for the missing cells (listed with the categories), and foreign testcases."""
    out = ["", *reconciled.no_cell_lines(report, "##")] if report.no_cells else []
    heading = reconciled.missing_heading(report, "##")
    out += ["", heading, "", reconciled.rerun_hint(report)] if heading else []
    foreign = reconciled.foreign_line(report)
    return [*out, "", foreign] if foreign else out


def _causes(report: Report, items: int, repository: str | None) -> list[str]:
    """The comment's causes (the same groups, from report.json), each with all its cells up to `items`."""
    if not report.groups:
        return []
    cells = sum(len(group.cells) for group in report.groups)
    out = [f"## Failing cells by cause ({n(cells, 'cell')}, {n(len(report.groups), 'cause')})", ""]
    for index, group in enumerate(report.groups[: max(items, 20)], 1):
        out += [markdown.cause_heading(index, group), "", *markdown.cause_lines(group, 300, repository), ""]
        out += [f"<details><summary>{markdown.the_cells(len(group.cells))}</summary>", ""]
        out += [f"- {code(cut(cell, 200))}" for cell in group.cells[:items]]
        if len(group.cells) > items:
            out.append(f"- …and {n(len(group.cells) - items, 'more cell')} in report.json")
        out += ["", "</details>", ""]
    if len(report.groups) > max(items, 20):
        out += [f"…and {n(len(report.groups) - max(items, 20), 'more cause')} in report.json.", ""]
    return out


class _ItemLines:
    """A category's list lines, escaped once for all the attempts of one render."""

    def __init__(self, report: Report) -> None:
        self.report, self.done = report, {}

    def __call__(self, name: str, items: int) -> list[str]:
        done = self.done.setdefault(name, [])
        lines = self.report.category(name)
        window = self.report.baseline_age.flaky_window if self.report.baseline_age is not None else None
        done += [_item(line, window) for line in lines[len(done) : items]]
        return done[:items]


def _item(line: CellLine, window: int | None) -> str:
    text = f"- {code(cut(line.cell, 200))}"
    if line.stage or line.kind:
        text += f" [{escape(cut(line.stage or line.kind, 40))}]"
    if line.covered_by:
        text += f" (skiplisted: {code(cut(line.covered_by, 100))})"
    text += markdown.flaky_note(line, window)
    if line.message:
        text += f": {escape(cut(line.message, 200))}"
    return text


def _grid(report: Report) -> tuple[list[str], list[str]]:
    """Header lines and one row per model class; columns are the cell variants that ran."""
    if not report.cells:
        return [], []
    flaky = {line.cell for line in report.category("flaky")}
    table: dict[str, dict[str, str]] = {}
    for line in report.cells:
        model_class, _, name = line.cell.partition("::")
        if _variant(name) is None:
            continue  # not a cell of the matrix: the grid has no column for it
        marks = table.get(model_class)
        if marks is None:
            marks = table[model_class] = {}
        marks[name] = (
            "🔓" if line.probe and line.status.startswith("passed") else markdown.mark(line, line.cell in flaky)
        )
    names = sorted({name for marks in table.values() for name in marks}, key=_column_key)
    labels = [_label(_variant(name)) for name in names]
    head = ["## Grid", "", legend(), "", "| model class | " + " | ".join(labels) + " |", "|---|" + "---|" * len(labels)]
    body = [
        f"| {escape(cut(cls, 100))} | " + " | ".join(table[cls].get(name, "") for name in names) + " |"
        for cls in sorted(table)
    ]
    return head, body


def legend() -> str:
    """LEGEND, naming each backend whose column label is not its name (`ov = OpenVINO`)."""
    labels = (f"{b.label} = {b.described}" for b in registry.REGISTRY if b.label != b.name)
    return LEGEND.format(backends=", ".join(labels))


@registry.cached(maxsize=4096)  # a report may name any test: the cache stays bounded
def _variant(name: str) -> Cell | None:
    try:
        return Cell.from_testcase("_", name, lenient=True)
    except CellIdError:
        return None


def _label(cell: Cell) -> str:
    if cell.test:  # a test that names no backend: its column is its name
        return cut(cell.test, 60)
    parts = [registry.label(cell.backend)]
    if cell.generate:
        parts.append("gen")
    parts.append("st" if cell.shape == "static" else "dyn")
    if cell.static_cache:
        parts.append("sc")
    if cell.target:
        parts.append("xnn" if cell.target == "xnnpack" else cell.target)
    return " ".join(parts)


def _column_key(name: str) -> tuple:
    cell = _variant(name)
    # A backend the bot does not know (or none) comes after its own; the extra keys tie for the bot's own cells.
    rank = BACKENDS.index(cell.backend) if placed(cell) else len(BACKENDS) + (not cell.backend)
    return (cell.path, rank, cell.backend, cell.test, cell.target or "", cell.cache or "", cell.shape != "static")
