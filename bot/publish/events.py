"""The fields the bot reads from GitHub Actions event payloads (`$GITHUB_EVENT_PATH`), as plain values."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from bot.errors import BotError
from bot.files import read_text
from bot.publish.github_api import COMMAND_CONTEXT, STATUS_CONTEXT
from bot.select.request import GATE_KINDS


class EventError(BotError, ValueError):
    """The event file is missing or not the event a command expects; the message says what to pass."""


def load_event(path: Path | str | None) -> dict:
    if not path:
        raise EventError("no event file: run this inside GitHub Actions or pass --event PATH (GITHUB_EVENT_PATH)")
    try:
        data = json.loads(read_text(path))
    except (OSError, ValueError, RecursionError) as exc:  # ValueError: not JSON, or not UTF-8
        raise EventError(f"{path}: cannot read the event payload ({exc})") from None
    if not isinstance(data, dict):
        raise EventError(f"{path}: the event payload is not a JSON object")
    return data


@dataclass(frozen=True)
class CommentEvent:
    """An `issue_comment` event."""

    action: str
    number: int
    on_pull_request: bool
    comment_id: int
    body: str
    author: str
    author_is_bot: bool
    default_branch: str

    @classmethod
    def from_payload(cls, event: dict) -> CommentEvent:
        try:
            issue, comment = event["issue"], event["comment"]
            user = comment.get("user") or {}
            login = _typed(user.get("login") or "", str, "comment.user.login")
            return cls(
                action=_typed(event.get("action") or "", str, "action"),
                number=_typed(issue["number"], int, "issue.number"),
                # An issue and a PR share numbers; only a PR's issue carries `pull_request`.
                on_pull_request=bool(issue.get("pull_request")),
                comment_id=_typed(comment["id"], int, "comment.id"),
                body=_typed(comment.get("body") or "", str, "comment.body"),
                author=login,
                author_is_bot=user.get("type") == "Bot" or login.endswith("[bot]"),
                default_branch=_typed((event.get("repository") or {}).get("default_branch") or "main", str, "branch"),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
            raise EventError(f"not an issue_comment event ({what}); this command runs on issue_comment") from None

    def ignored_because(self) -> str | None:
        """Why the bot does nothing with this comment, or None when it should read it."""
        if self.action != "created":
            return f"comment was {self.action or 'not created'}: only new comments are commands"
        if not self.on_pull_request:
            return f"#{self.number} is an issue, not a pull request"
        if self.author_is_bot:
            return f"comment by a bot ({self.author})"
        return None


# The run-name export-conformance.yml gives a run dispatched for an `/export-check` comment:
# `export-conformance #<pr>: /export-check <kind> (comment <id>)` (callers older than the kind
# leave it out: such a run is read as a command run, never as the gate's).
_COMMAND_RUN = re.compile(r"\(comment (\d+)\)\s*$")
# A run the bot dispatches for its own PR (the obsolete-skip PR's check) answers no comment: `(comment )`.
_COMMAND_PR = re.compile(r"#(\d+): /export-check(?: ([a-z]+))? +\(comment \d*\)\s*$")


def command_comment_of(title: str) -> int | None:
    """The `/export-check` comment a dispatched run's title names, or None."""
    found = _COMMAND_RUN.search(title or "")
    return int(found[1]) if found else None


def command_pr_of(title: str) -> int | None:
    """The PR a dispatched run's title names, or None."""
    found = _COMMAND_PR.search(title or "")
    return int(found[1]) if found else None


def command_kind_of(title: str) -> str | None:
    """The request kind a dispatched run's title names (`rerun`, `models`, …), or None."""
    found = _COMMAND_PR.search(title or "")
    return found[2] if found else None


def status_context(event_name: str, kind: str | None) -> str:
    """The status a conformance run reports under: the required `export-conformance`, or the command's own.

    Every run but a dispatched one sets the gate (its selection is the PR's or the queue's). A
    dispatched `/export-check` run does only when its kind covers the PR's selection (`GATE_KINDS`);
    a run whose title names no kind is read as a command run.
    """
    return STATUS_CONTEXT if event_name != "workflow_dispatch" or kind in GATE_KINDS else COMMAND_CONTEXT


@dataclass(frozen=True)
class RunEvent:
    """A `workflow_run` event (or the `pull_request` event of a direct run): which PR and commit it was for."""

    head_sha: str | None
    pr_numbers: tuple[int, ...]
    run_url: str | None
    # The `/export-check` comment a dispatched run answers, read from the run's title. Only a
    # `workflow_dispatch` run counts: its workflow file is the default branch's, while a
    # `pull_request` run's title comes from the PR's own copy and could name any comment.
    command_comment: int | None = None
    command_pr: int | None = None  # the PR a dispatched run's title names
    # Where the run's commit came from: a fork PR's owner and branch find it in one request
    # (a `workflow_run` event lists no pull request for a fork).
    head_owner: str | None = None
    head_branch: str | None = None
    # GitHub's record of the run itself (a `workflow_run` event): what the trust decisions read.
    run_id: int | None = None
    event_name: str = ""
    head_repo: str | None = None  # full name: a fork's for a fork PR's run
    path: str = ""  # the workflow file the run ran
    conclusion: str | None = None
    command_kind: str | None = None  # the request kind a dispatched run's title names
    run_attempt: int = 1  # a re-run keeps the run id and counts its attempts
    created_at: str = ""  # when GitHub created the run (the push, for a PR's run; a re-run keeps it)

    @property
    def status_url(self) -> str | None:
        """The link this run's statuses carry: its attempt's page (bot/publish/pending.py orders statuses by it)."""
        return attempt_url(self.run_url, self.run_attempt) if self.run_url and self.run_id is not None else self.run_url

    @property
    def status_context(self) -> str:
        return status_context(self.event_name, self.command_kind)

    def as_run(self):
        """The run as GitHub recorded it (None for a direct `pull_request` run, which has no record here)."""
        from bot.publish.github_api import WorkflowRun

        if self.run_id is None:
            return None
        return WorkflowRun(
            self.run_id,
            self.head_sha or "",
            self.head_branch,
            self.created_at,
            event=self.event_name,
            url=self.run_url or "",
            conclusion=self.conclusion,
            head_repo=self.head_repo,
            path=self.path,
            pull_requests=self.pr_numbers,
        )

    @classmethod
    def from_payload(cls, event: dict) -> RunEvent:
        try:
            return cls._read(event)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
            raise EventError(f"not a workflow_run or pull_request event ({what}); pass the run's event") from None

    @classmethod
    def _read(cls, event: dict) -> RunEvent:
        run = event.get("workflow_run")
        if isinstance(run, dict):
            return cls._run(run)
        pull = event.get("pull_request")
        if isinstance(pull, dict):
            sha = _typed((pull.get("head") or {}).get("sha"), (str, type(None)), "pull_request.head.sha")
            return cls(sha, (_typed(pull["number"], int, "pull_request.number"),), None)
        return cls(None, (), None)

    @classmethod
    def _run(cls, run: dict) -> RunEvent:
        pulls = run.get("pull_requests") or ()
        numbers = tuple(_typed(p["number"], int, "pull_requests[].number") for p in pulls if "number" in p)
        title = _typed(run.get("display_title") or "", str, "workflow_run.display_title")
        name = _typed(run.get("event") or "", str, "workflow_run.event")
        if name != "workflow_dispatch":
            title = ""  # only a dispatched run's title is the bot's own (docs/github.md)
        sha = _typed(run.get("head_sha"), (str, type(None)), "workflow_run.head_sha")
        url = _typed(run.get("html_url"), (str, type(None)), "workflow_run.html_url")
        head_repository = _typed(run.get("head_repository") or {}, dict, "workflow_run.head_repository")
        owner = _typed(head_repository.get("owner") or {}, dict, "workflow_run.head_repository.owner").get("login")
        owner = _typed(owner, (str, type(None)), "workflow_run.head_repository.owner.login")
        full_name = _typed(
            head_repository.get("full_name"), (str, type(None)), "workflow_run.head_repository.full_name"
        )
        branch = _typed(run.get("head_branch"), (str, type(None)), "workflow_run.head_branch")
        return cls(
            sha,
            numbers,
            url,
            command_comment_of(title),
            command_pr_of(title),
            owner,
            branch,
            run_id=_typed(run.get("id"), (int, type(None)), "workflow_run.id"),
            event_name=name,
            head_repo=full_name,
            path=_typed(run.get("path") or "", str, "workflow_run.path"),
            conclusion=_typed(run.get("conclusion"), (str, type(None)), "workflow_run.conclusion"),
            command_kind=command_kind_of(title),
            run_attempt=_attempt(run.get("run_attempt")),
            created_at=_typed(run.get("created_at") or "", str, "workflow_run.created_at"),
        )


def attempt_url(url: str, attempt: int) -> str:
    """The page of one attempt of a run, the link every status of the run's sets."""
    base = url.rstrip("/").split("/attempts/")[0]
    return f"{base}/attempts/{attempt}" if base else url


def _attempt(value: object) -> int:
    """`workflow_run.run_attempt`; 1 when GitHub sent none (a payload from before attempts were counted)."""
    if value is None:
        return 1
    attempt = _typed(value, int, "workflow_run.run_attempt")
    if attempt < 1:
        raise ValueError(f"`workflow_run.run_attempt` is {attempt}")
    return attempt


def _typed(value, types, field: str):
    """`value` when it has the JSON type GitHub sends; a TypeError naming the field otherwise."""
    if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
        raise TypeError(f"`{field}` is {value!r}")
    if not isinstance(value, types):
        raise TypeError(f"`{field}` is {type(value).__name__}")
    return value
