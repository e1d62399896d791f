"""Reason drafts for proposed skips, written the way the seed's entries read."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from bot import registry
from bot.cells import BACKENDS, Cell
from bot.diff.groups import Group
from bot.outcomes import CellResult

EXPORTERS = registry.DerivedDict(lambda declared: {backend.name: backend.exporter for backend in declared})
_VARIANTS = {
    "generate": "generate",
    "dynamic": "dynamic shapes",
    "static": "static shapes",
    "static-cache": "static cache",
}
MAX_MESSAGE = 160
TODO = "TODO: find the root cause."

# Machine-specific parts of an error message: installation prefixes, home and temp folders,
# object addresses. They differ between runners, so they would make every draft unique.
_SITE_PACKAGES = re.compile(r"(?:[A-Za-z]:)?[\\/][^\s'\"`()]*?[\\/](?:site|dist)-packages[\\/]")
_HOME = re.compile(r"(?:[A-Za-z]:)?[\\/](?:home|Users|root|tmp|private|var[\\/]folders)(?:[\\/][^\s'\"`()]*)?[\\/]")
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")


def clean_message(message: str, model_class: str | None = None) -> str:
    """The first line of `message`, without paths or addresses, trimmed; backticks become quotes."""
    line = next((part.strip() for part in (message or "").splitlines() if part.strip()), "")
    # `torch._dynamo.exc.UserError: …` → `UserError: …`: the seed names exceptions bare.
    line = re.sub(r"^(?:[A-Za-z_]\w*\.)+([A-Z]\w*)(?=:)", r"\1", line)
    line = _SITE_PACKAGES.sub("", line)
    line = _HOME.sub("…/", line)
    line = _ADDRESS.sub("0x…", line)
    line = re.sub(r"\s+", " ", line).replace("`", "'")
    if len(line) > MAX_MESSAGE:
        line = line[: MAX_MESSAGE - 1].rstrip() + "…"
    return line


def signature(result: CellResult) -> tuple[str, str, str]:
    """What makes two failures "the same": stage or error kind, and the cleaned message with the class name masked."""
    message = clean_message(result.message)
    masked = re.sub(rf"\b{re.escape(result.cell.model_class)}\b", "<class>", message)
    return (result.stage or "", result.kind or "", masked)


def exception_type(result: CellResult) -> str:
    head = clean_message(result.message).split(":", 1)[0].strip()
    return head if re.fullmatch(r"[A-Za-z_][\w.]*", head) else "error"


def representative(results: Sequence[CellResult]) -> CellResult:
    """The failure most of `results` share (the first such one, in cell order)."""
    ordered = sorted(results, key=lambda r: r.cell)
    counts = Counter(signature(r) for r in ordered)
    top = max(counts.values())
    return next(r for r in ordered if counts[signature(r)] == top)


def draft_reason(scope: str, results: Sequence[CellResult], group: Group | None = None) -> str:
    """`ONNX export (dynamic shapes) fails at stage \\`export\\`: \\`Type: message\\`. TODO: …`.

    With the report's failure group of these cells, the message is the group's signature and
    the draft names the line the traceback points at: `… at stage \\`export\\` in \\`path:line\\`: \\`Type: message\\`.`
    """
    first = representative(results)
    names = _exporters([r.cell for r in results])
    verb = _verb(first, plural=len(names) > 1) + _where(first, group)
    message = clean_message(group.signature if group is not None else first.message)
    detail = f": `{message}`" if message else ""
    return f"{_subject(names, scope)} {verb}{detail}. {TODO}"


def _subject(names: list[str], scope: str) -> str:
    """`ONNX export (dynamic shapes)`, or `ONNX and OpenVINO exports …` for several exporters."""
    what = f"{', '.join(names[:-1])} and {names[-1]} exports" if len(names) > 1 else f"{names[0]} export"
    variant = _variant(scope)
    return f"{what} ({variant})" if variant else what


def _verb(first: CellResult, *, plural: bool) -> str:
    """What the exports do: crash, time out, not match eager, or fail."""
    if first.kind == "crash":
        return "crash" if plural else "crashes"
    if first.kind == "timeout":
        return "time out" if plural else "times out"
    if first.stage == "compare":
        return "do not match eager" if plural else "does not match eager"
    return "fail" if plural else "fails"


def _where(first: CellResult, group: Group | None) -> str:
    """Where the failure happened, as far as it is known: its stage, then the line its failure group blames.

    A failure with neither stage nor error kind (a checkout's test whose frames do not say) names no
    stage: the message gives the exception, the culprit the frame; never a placeholder in a reason.
    """
    stage = first.stage or ("" if first.kind in ("crash", "timeout") else first.kind or "")
    if stage == "compare":
        stage = ""  # "does not match eager" already says where
    where = f" at stage `{stage}`" if stage else ""
    if group is not None and group.culprit is not None:
        where += f" in `{group.culprit.where}`"  # before the message, so a cut message keeps it
    return where


def same_as_reason(first_class: str, result: CellResult) -> str:
    """The seed's back-reference for a class failing like `first_class`: `Same … as \\`First\\`.`"""
    stage = result.stage or result.kind
    at = f" at stage `{stage}`" if stage else ""
    return f"Same `{exception_type(result)}`{at} as `{first_class}`."


def _exporters(cells: Sequence[Cell]) -> list[str]:
    backends = [b for b in BACKENDS if any(c.backend == b for c in cells)]
    names = []
    for backend in backends:
        name = EXPORTERS[backend]
        targets = sorted({c.target for c in cells if c.backend == backend and c.target})
        if targets:
            name += f" ({', '.join(targets)})"
        names.append(name)
    return names or ["The"]


def _variant(scope: str) -> str:
    parts = [p for p in scope.split(".") if p in _VARIANTS]
    return ", ".join(_VARIANTS[p] for p in parts)
