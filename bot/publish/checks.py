"""The `export-conformance report` check run (docs/github.md, "Check run"): the comment as its summary, culprit lines annotated.

A commit status cannot point at a line; a check run can. For each failure group whose culprit is a
line of `src/transformers/…`, one annotation sits on that line, so "Files changed" shows the break
where the PR made it. The report that names the lines was written by code the PR controls: a path
is taken only when it is a plain relative path under `src/transformers/`, a line only when it is a
sane number, and every text is cut to GitHub's limits. The required gate stays the commit status.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Not the required status's name: GitHub requires both a check and a status that share the name
# a branch protection requires ("Troubleshooting required status checks"), and the check run comes
# only with a report, so a PR whose run left none would wait on it forever.
CHECK_NAME = "export-conformance report"
MAX_SUMMARY = 65_535  # GitHub's limit on `output.summary`
MAX_MESSAGE = 64 * 1024  # on an annotation's `message`
MAX_TITLE = 255
PER_REQUEST = 50  # annotations GitHub takes per create or update
MAX_ANNOTATIONS = 500  # per check run: enough for every group a report keeps
_PATH = re.compile(r"src/transformers/(?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-]+\.py")
CONCLUSIONS = {"success": "success", "failure": "failure", "neutral": "neutral"}


@dataclass(frozen=True)
class Annotation:
    path: str
    line: int
    title: str
    message: str

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "start_line": self.line,
            "end_line": self.line,
            "annotation_level": "failure",
            "title": self.title,
            "message": self.message,
        }


def annotations(report) -> tuple[Annotation, ...]:
    """One annotation per failure group whose culprit is a checked line of `src/transformers/`."""
    found = []
    for group in report.groups:
        culprit = group.culprit
        if culprit is None or not _PATH.fullmatch(culprit.path or "") or ".." in culprit.path.split("/"):
            continue
        if isinstance(culprit.line, bool) or not isinstance(culprit.line, int) or not 1 <= culprit.line <= 10**7:
            continue
        cells = len(group.cells)
        at = f" at {group.stage}" if group.stage else ""
        title = f"{cells} export cell{'s' if cells != 1 else ''} fail{at} here"
        shown = ", ".join(group.cells[:5]) + (f" and {cells - 5} more" if cells > 5 else "")
        message = f"{group.excerpt or group.signature}\n\nCells: {shown}\nReproduce: {group.test_repro or group.repro}"
        found.append(Annotation(culprit.path, culprit.line, title[:MAX_TITLE], message[:MAX_MESSAGE]))
    return tuple(found[:MAX_ANNOTATIONS])


def batches(found: tuple[Annotation, ...]) -> list[list[dict]]:
    """The annotations in GitHub's batches of 50: the first with the create, the rest as updates."""
    return [[a.to_json() for a in found[i : i + PER_REQUEST]] for i in range(0, len(found), PER_REQUEST)] or [[]]


def output(report, body: str, batch: list[dict]) -> dict:
    """A check run's `output`: the verdict as its title, the comment as its summary, one batch of annotations."""
    title = f"Export conformance: {report.verdict}"
    summary = (
        body
        if len(body) <= MAX_SUMMARY
        else body[: MAX_SUMMARY - 40].rsplit("\n", 1)[0] + "\n\n_(cut: see the PR comment)_"
    )
    return {"title": title, "summary": summary, "annotations": batch}
