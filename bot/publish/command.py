"""`/export-check` commands: the first line of a PR comment parsed into a request, and the help text (pure)."""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from bot.cells import BACKENDS, Cell, CellIdError
from bot.select.request import RUN_KINDS

if TYPE_CHECKING:
    from bot.diff.model import Report

PREFIX = "/export-check"
# The kinds that start a run are the select stage's (one home: bot/select/request.py); `apply` and
# `help` are answered here and never reach a run.
KINDS = (*RUN_KINDS, "apply", "help")
# The kinds a command names by one word: all but a bare `/export-check` (rerun) and a list of models.
WORDS = tuple(kind for kind in KINDS if kind not in ("rerun", "models"))
ALLOWED_PERMISSIONS = frozenset({"admin", "maintain", "write"})  # role names (and legacy permissions)
# `/export-check failed`: the report categories whose cells it re-runs (docs/github.md says why
# these), how many it dispatches at most, and the longest cell id it takes from a report.
FAILING_CATEGORIES = ("newly_broken", "new_failing", "still_failing")
MAX_FAILED = 100
MAX_CELL_ID = 200  # the longest id of Transformers 5.23 is 122 characters (a 60-character class)


def help_text() -> str:
    """The `/export-check help` reply, naming the backends declared now (bot/registry.py).

    A `|` inside a table cell ends the cell even in a code span, so each one is escaped (`\\|`):
    GitHub's table reads it as a literal pipe and shows it without the backslash.
    """
    backends = "\\|".join(BACKENDS)
    return f"""\
**`/export-check` commands** (first line of a PR comment; write, maintain or admin permission needed)

| command | does |
|---|---|
| `/export-check` | re-run this PR's selection of conformance cells |
| `/export-check <ModelClass or model_type> … [--backend {backends} …] [--static\\|--dynamic] [--generate]` | run the cells of the named models (all backends and shapes unless narrowed; `--generate` adds the generate cells) |
| `/export-check full` | run every cell of every model class |
| `/export-check probe` | run the skiplisted cells too, to find obsolete skips |
| `/export-check failed` | re-run only the failing cells of this PR's latest report (at most {MAX_FAILED}) |
| `/export-check apply` | commit the proposed skiplist patch of the latest report to this PR's branch (same-repository PRs only) |
| `/export-check help` | show this text |
"""


@dataclass(frozen=True)
class Request:
    """What the run job does; `head_sha` is pinned when the command is accepted."""

    kind: str
    models: tuple[str, ...] = ()
    backends: tuple[str, ...] = ()
    shapes: tuple[str, ...] = ()
    generate: bool = False
    pr: int | None = None
    head_sha: str | None = None
    comment_id: int | None = None
    cells: tuple[str, ...] = ()  # a `failed` request's cell ids, each checked by `failing_cells`

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Request:
        data = json.loads(text)
        for key in ("models", "backends", "shapes", "cells"):
            data[key] = tuple(data.get(key, ()))
        return cls(**data)


@dataclass(frozen=True)
class Invalid:
    """A command the bot cannot run; `message` is the reply (help text included where useful)."""

    message: str
    problems: tuple[str, ...] = field(default=())  # the ones the message lists
    count: int = 0  # all of them


def first_line(body: str) -> str:
    for line in body.splitlines():
        if line.strip():
            return line.strip()
    return ""


MAX_SHOWN = 5  # problems listed in a refusal; the rest are counted, so the reply always fits a comment
MAX_WORD = 40  # characters of an echoed word
MAX_PATCH = 60_000  # a patch longer than this does not fit in a reply (GitHub's limit is 65,536)


def code(text: str) -> str:
    """`text` as an inline code span it cannot leave and in which it cannot mention anyone.

    A backquote would close the span (and let `@team` after it notify a team), so it becomes
    a look-alike; `@` gets a zero-width space after it, which GitHub never reads as a mention.
    """
    if len(text) > MAX_WORD:
        text = text[: MAX_WORD - 1] + "…"
    return "`" + text.replace("`", "\u02cb").replace("@", "@\u200b") + "`"


@dataclass(frozen=True)
class _Problem:
    kind: str  # "backend", "no-value", "option", "model", "no-model"
    word: str = ""


def _describe(problem: _Problem, names: frozenset[str]) -> str:
    if problem.kind == "backend":
        return f"unknown backend {code(problem.word)} (known: {', '.join(BACKENDS)})"
    if problem.kind == "no-value":
        return "`--backend` needs a value"
    if problem.kind == "option":
        return f"{code(problem.word)} is not understood here"
    if problem.kind == "no-model":
        return "options need at least one model class or model type"
    # Suggestions cost a scan of every name: only the few problems shown pay it.
    near = difflib.get_close_matches(problem.word[:MAX_WORD], sorted(names), n=3)
    hint = f" (did you mean {', '.join(f'`{n}`' for n in near)}?)" if near else ""
    return f"{code(problem.word)} is not a model class or model type of the installed Transformers{hint}"


def parse_command(body: str, *, model_classes: frozenset[str], model_types: frozenset[str]) -> Request | Invalid | None:
    """The request in a comment's first non-blank line; None when it is not an `/export-check` comment.

    Linear in the input: each word is looked at once, and only the problems the reply shows
    are described (`MAX_SHOWN`), so a line of thousands of bad words is refused at once.
    """
    words = first_line(body).split()
    if not words or words[0] != PREFIX:
        return None
    args = words[1:]
    if not args:
        return Request("rerun")
    if len(args) == 1 and args[0] in WORDS:
        return Request(args[0])
    models, backends, shapes, generate, problems = _read_options(args, model_classes, model_types)
    if not models and not problems:
        problems.append(_Problem("no-model"))
    if problems:
        return _invalid(problems, model_classes | model_types)
    return Request(
        "models",
        models=tuple(dict.fromkeys(models)),
        backends=tuple(dict.fromkeys(backends)),
        shapes=tuple(dict.fromkeys(shapes)),
        generate=generate,
    )


def _read_options(
    args: list[str], model_classes: frozenset[str], model_types: frozenset[str]
) -> tuple[list[str], list[str], list[str], bool, list[_Problem]]:
    """The models, backends and shapes a models request names, its `--generate`, and its problems in order."""
    models, backends, shapes, generate, problems = [], [], [], False, []
    it = iter(args)
    for word in it:
        if word == "--backend" or word.startswith("--backend="):
            value = word.partition("=")[2] or next(it, "")
            _read_backends(value, backends, problems)
        elif word in ("--static", "--dynamic"):
            shapes.append(word[2:])
        elif word == "--generate":
            generate = True
        elif word.startswith("-") or word in WORDS:
            problems.append(_Problem("option", word))
        elif word in model_classes or word in model_types:
            models.append(word)
        else:
            problems.append(_Problem("model", word))
    return models, backends, shapes, generate, problems


def _read_backends(value: str, backends: list[str], problems: list[_Problem]) -> None:
    """One `--backend` value (comma-separated): known backends to `backends`, the rest to `problems`."""
    named = [backend for backend in value.split(",") if backend]
    for backend in named:
        if backend in BACKENDS:
            backends.append(backend)
        else:
            problems.append(_Problem("backend", backend))
    if not named:  # `--backend=,,,` names no backend: refused, never read as "all backends"
        problems.append(_Problem("no-value"))


def _invalid(problems: list[_Problem], names: frozenset[str]) -> Invalid:
    """The reply to a command with problems: the first `MAX_SHOWN` described, the rest counted."""
    shown = tuple(_describe(p, names) for p in problems[:MAX_SHOWN])
    listing = "\n".join(f"- {p}" for p in shown)
    more = len(problems) - len(shown)
    if more:
        listing += f"\n- … and {more} more problem{'s' if more > 1 else ''} ({len(problems)} in all)"
    return Invalid(f"I could not read this command:\n\n{listing}\n\n{help_text()}", shown, len(problems))


def refusal(user: str, role: str) -> str:
    """`role` is the user's role name on the repository (GitHub's `role_name`)."""
    return (
        f"Sorry @{user}, `/export-check` commands can only be run by people with the write, maintain or admin "
        f"role on this repository (yours: {code(role)}). A maintainer can run it for you."
    )


def closed_refusal(number: int) -> str:
    return (
        f"#{number} is closed, so there is nothing to check: `/export-check` commands run on open pull "
        "requests. Reopen it first if it still needs a conformance run."
    )


def fork_apply_reply(head_repo: str, patch: str | None) -> str:
    """The one answer to `/export-check apply` on a fork PR: the bot cannot push there, so it gives the patch."""
    intro = (
        f"`/export-check apply` only commits to branches of this repository, and this PR's branch lives in "
        f"{code(head_repo)}: the bot's token cannot push there."
    )
    if patch is None:
        return (
            f"{intro} There is no conformance report for the current head yet, so there is no patch to give: "
            "comment `/export-check`, then `/export-check apply` again once its report is posted."
        )
    if not patch.strip():
        return f"{intro} The latest report proposes no skiplist change for this head: there is nothing to apply."
    if len(patch) > MAX_PATCH:
        return (
            f"{intro} The proposed patch ({patch.count(chr(10)):,} lines) is too long for a comment: download the "
            "run's `export-report` artifact and apply it with `export-bot propose --report report.json --apply`."
        )
    return (
        f"{intro} Here is the proposed skiplist patch; apply it to your branch (`git apply`) and push:\n\n"
        f"{fenced(patch, 'diff')}\n"
    )


# Said on every answer to a command on a fork PR (docs/github.md, the threat model).
_FORK_CONTEXT = (
    "A command on a pull request from a fork never starts a run on the default branch: the fork's code "
    "would run there with the default branch's cache scope, which main's own runs restore."
)


def fork_kind_reply(kind: str) -> str:
    """`/export-check <kind>` on a fork PR, for a kind that would need a dispatched run."""
    return (
        f"{_FORK_CONTEXT} `/export-check {kind}` needs such a run, so nothing was started. Comment "
        "`/export-check` to re-run this PR's own conformance run (it runs in the PR's own context), or ask "
        "the contributor to push a commit."
    )


def fork_no_run_reply(head_sha: str) -> str:
    return (
        f"{_FORK_CONTEXT} `/export-check` re-runs this PR's own conformance run, and there is none for its head "
        f"{head_sha[:12]} (a `[skip ci]` commit starts none): nothing was started. Ask the contributor to push "
        "a commit without `[skip ci]`, then comment `/export-check` again if needed."
    )


def fork_run_going_reply(run_id: int, url: str, *, waiting: bool) -> str:
    state = (
        "is waiting for a maintainer to approve it: approve it on its page to start it"
        if waiting
        else "has not finished yet: its report will update the comment and the status"
    )
    return f"{_FORK_CONTEXT} This PR's own conformance run for its head ([run {run_id}]({url})) {state}."


def fork_rerun_reply(run_id: int, url: str) -> str:
    return (
        f"{_FORK_CONTEXT} Re-running this PR's own conformance run instead ([run {run_id}]({url}), the PR's "
        "`pull_request` run with its read-only token and its own cache scope). Its report updates the comment "
        "and the status. It ran the fork's copy of the workflow: review what the PR changes under `.github/` "
        "before trusting its verdict."
    )


def fenced(text: str, language: str = "") -> str:
    """A fenced code block that `text` cannot close: the fence is longer than any backquote run inside."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


@dataclass(frozen=True)
class FailedCells:
    """The cells `/export-check failed` re-runs: the first `MAX_FAILED` failing ids of a report, by id."""

    cells: tuple[str, ...]
    total: int  # failing cells in the report, the ones left out included

    @property
    def left_out(self) -> int:
        return self.total - len(self.cells)


def failing_cells(report: Report, *, limit: int = MAX_FAILED) -> FailedCells:
    """The report's failing cells to re-run, each id checked to be a cell's (pure).

    The report was written by code the PR controls: an id that is not a cell's (a shell line, a
    newline, 10,000 characters) is a CellIdError naming where it is, and the report is refused
    whole. A cell a head skiplist covers or a probe ran is left out: it does not fail the verdict,
    and an ordinary run would skip it.
    """
    ids: set[str] = set()
    for name in FAILING_CATEGORIES:
        for i, line in enumerate(report.category(name)):
            problem = cell_id_problem(line.cell)
            if problem:
                # Said by its place only: the reply never repeats a string the PR's code chose.
                raise CellIdError(f"the cell at `categories.{name}[{i}]` {problem}")
            if not line.covered_by and not line.probe:
                ids.add(line.cell)
    ordered = sorted(ids)
    return FailedCells(tuple(ordered[:limit]), len(ordered))


def cell_id_problem(cell_id: str) -> str | None:
    """Why `cell_id` is not a cell's id as the bot writes it, or None."""
    if len(cell_id) > MAX_CELL_ID:
        return f"is {len(cell_id):,} characters long (a cell id has at most {MAX_CELL_ID})"
    try:
        cell = Cell.parse(cell_id, lenient=True)
    except CellIdError:
        return "is not a cell id (`ModelClass::test_<backend>_export_…`)"
    if cell.id != cell_id:  # the same cell written another way: not what the bot writes
        return f"is not written as the bot writes cell ids ({code(cell.id)})"
    return None


def no_report_reply(head_sha: str) -> str:
    return (
        f"There is no conformance report for the current head {head_sha[:12]} yet (a report for an earlier head "
        "does not count), so there are no failing cells to re-run. Comment `/export-check` to check this head, "
        "then `/export-check failed` once its report is posted."
    )


def unusable_report_reply(head_sha: str, run_id: int, problem: str) -> str:
    return (
        f"The latest conformance report for {head_sha[:12]} (run {run_id}) cannot be used, so nothing was re-run: "
        f"{problem}. Comment `/export-check` to run this PR's selection again."
    )


def no_failing_reply(head_sha: str, run_id: int) -> str:
    return (
        f"The latest conformance report for {head_sha[:12]} (run {run_id}) has no failing cells to re-run "
        "(flaky cells, skipped cells and failing cells a skiplist covers are not re-run). Nothing was started."
    )


def left_out_reply(found: FailedCells, run_id: int) -> str:
    """Said beside the 👀 when the report has more failing cells than one `failed` run takes."""
    return (
        f"The latest conformance report (run {run_id}) has {found.total:,} failing cells: this run re-runs the first "
        f"{len(found.cells)} by id, up to {code(found.cells[-1])}, and leaves out the other {found.left_out:,}. "
        "Comment `/export-check` to run this PR's whole selection, or name the models: `/export-check BertModel …`."
    )
