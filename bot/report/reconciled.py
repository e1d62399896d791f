"""What the comment and the job summary say of the head held against its selection: missing cells, foreign tests.

The report's fields come from bot/diff/compare.py (docs/outcomes.md, Missing and foreign): a selected
cell with no result, a testcase that is not a cell, and a head holding no cell at all.
"""

from __future__ import annotations

from bot.diff.model import FOREIGN_NAME, Report
from bot.report.markdown import cut, escape, n

FOLD_ABOVE = 5  # missing cells named in the open up to this many; more fold into <details>


def missing_heading(report: Report, level: str = "###") -> str | None:
    """`### ⚠️ No result for 111 of 112 selected cells`, when any is missing."""
    missing = len(report.category("missing"))
    if not missing:
        return None
    of = f"{missing:,} of {report.selected:,}" if report.selected else f"{missing:,}"
    return f"{level} ⚠️ No result for {of} selected cells"


def rerun_hint(report: Report) -> str:
    """What to run again for the missing cells: the shards the selection's split put them in, else the run."""
    shards = report.missing_shards
    never = "A selected cell with no result is never read as a pass: the verdict waits for it."
    if not shards:
        return f"{never} Re-run the whole run (the selection does not say which shard held them), then the report."
    which = f"shard {shards[0]}" if len(shards) == 1 else "shards " + ", ".join(shards[:-1]) + f" and {shards[-1]}"
    return f"{never} Re-run {which} (the selection's split put them there), then the report."


def no_cell_lines(report: Report, level: str = "###") -> list[str]:
    """The section of a head that held no cell: what JUnit was expected, and what was found instead."""
    if not report.no_cells:
        return []
    files = len(report.files.get("head", ()))
    found = f"{n(report.non_cells, 'testcase')}, none a cell" if report.non_cells else "no testcase"
    return [
        f"{level} ⚠️ No cell in the results",
        "",
        f"The head's JUnit ({n(files, 'file')}) holds {found}: nothing was judged. export-bot reads one "
        "`<testcase>` per cell, its `classname` the model class and its `name` the cell's test "
        "(`BertModel`, `test_onnx_export_static`), as `export-bot run --junit` writes them; "
        "pass those files with `--head`.",
    ]


def foreign_line(report: Report) -> str | None:
    """`ℹ️ 3 testcases are not cells, …: a, b, c.`: another producer's tests, a few named (a fork wrote them)."""
    if not report.non_cells:
        return None
    one = report.non_cells == 1
    names = ", ".join(escape(cut(name, FOREIGN_NAME)) for name in report.foreign)
    more = report.non_cells - len(report.foreign)
    names += f" and {more:,} more" if more > 0 and names else ""
    said = f"{n(report.non_cells, 'testcase')} {'is not a cell' if one else 'are not cells'}"
    return f"ℹ️ {said}: never a pass, left out of the verdict" + (f" ({names})." if names else ".")
