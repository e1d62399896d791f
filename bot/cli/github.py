"""`export-bot github …`: the entry points the workflows call, with the environment GitHub Actions provides."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import click

from bot.cli.common import EXIT_FAILURE, EXIT_OK, BotError, handle_errors


@dataclass(frozen=True)
class Context:
    repository: str | None
    token: str | None
    api_url: str
    event_path: str | None
    config: Path | None

    def client(self):
        from bot.publish.github_api import GitHubClient, RetryPolicy
        from bot.settings import SettingsError, load_settings

        try:
            s = load_settings(self.config)
        except SettingsError as exc:
            raise BotError(str(exc)) from None
        if not self.repository or not self.token:
            raise BotError(
                "no repository or token: set GITHUB_REPOSITORY and GITHUB_TOKEN (or pass --repo and --token)"
            )
        policy = RetryPolicy(
            total=s.github_retries,
            backoff=s.github_backoff,
            write_interval=s.github_write_interval,
            secondary_rate_wait=s.github_rate_limit_wait,
            timeout=int(s.github_timeout),
        )
        return GitHubClient(self.repository, self.token, api_url=self.api_url, policy=policy)

    def event(self) -> dict:
        from bot.publish.events import EventError, load_event

        try:
            return load_event(self.event_path)
        except EventError as exc:
            raise BotError(str(exc)) from None


def _actions():
    from bot.publish.actions import Actions

    return Actions.from_env(sys.stdout)


def _github_errors(fn):
    """GitHub refusing (after retries) fails the job with an error annotation and exit 2, like any bad input.

    Exit 1 is kept for a verdict of failure (docs/diff.md): a refusal must not read as cells broken.
    """
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from bot.publish.baseline import ArtifactError
        from bot.publish.github_api import GitHubError

        try:
            return fn(*args, **kwargs)
        except GitHubError as exc:
            _actions().annotate("error", str(exc))
            raise BotError(str(exc)) from None
        except ArtifactError as exc:
            raise BotError(str(exc)) from None

    return handle_errors(wrapper)


@click.group()
# Not `required=True`: click checks group options before a subcommand's --help, so
# `export-bot github comment --help` would fail outside Actions. `client()` asks for them.
@click.option("--repo", envvar="GITHUB_REPOSITORY", default=None, help="owner/name (GITHUB_REPOSITORY).")
@click.option("--token", envvar="GITHUB_TOKEN", default=None, show_envvar=True, help="API token (GITHUB_TOKEN).")
@click.option("--api-url", envvar="GITHUB_API_URL", default="https://api.github.com", help="GITHUB_API_URL.")
@click.option(
    "--event", "event_path", envvar="GITHUB_EVENT_PATH", default=None, help="Event payload (GITHUB_EVENT_PATH)."
)
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="pyproject.toml with [tool.export-bot] (default: ./pyproject.toml).",
)
@click.pass_context
def github(
    ctx: click.Context, repo: str | None, token: str | None, api_url: str, event_path: str | None, config: Path | None
) -> None:
    """Entry points of the workflows: comment, pending, command, apply, verify-sha, baseline, reports, obsolete-skips."""
    ctx.obj = Context(repo, token, api_url, event_path, config)


@github.command()
@click.option("--report", "report_path", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--pr", type=int, default=None, help="PR number (default: from the workflow_run event).")
@click.option("--run-id", type=int, envvar="GITHUB_RUN_ID", default=0, help="Orders concurrent runs (GITHUB_RUN_ID).")
@click.option("--bot-login", envvar="EXPORT_BOT_LOGIN", default="github-actions[bot]", show_default=True)
@click.pass_obj
@_github_errors
def comment(obj: Context, report_path: Path, pr: int | None, run_id: int, bot_login: str) -> None:
    """Post or update the sticky comment and the export-conformance status from report.json."""
    from bot.diff.model import ReportError, load_report
    from bot.publish.comment import MAX_COMMENT, stamp_length, status_description, upsert_sticky
    from bot.publish.events import RunEvent
    from bot.publish.respond import finish_command
    from bot.report import COMMENT_MARKER, render_comment, render_summary

    event = RunEvent.from_payload(obj.event()) if obj.event_path else RunEvent(None, (), None)
    try:
        report = load_report(report_path)
    except ReportError as exc:
        if event.command_comment:  # the command's run ended without a report: say so where it was asked
            click.echo(finish_command(obj.client(), event.command_comment, reported=False))
        raise BotError(f"{exc}; the run's log says why it wrote none: {event.run_url or 'see the run'}") from None
    actions = _actions()
    # The summary first: it must be there even when GitHub refuses what follows.
    actions.write_summary(render_summary(report))
    client = obj.client()
    queue = _queue_run(obj, report.verdict)
    sha, numbers = queue if queue else _pulls_of_run(client, event, report.head_sha, pr)
    if not numbers and not queue:
        # The PR's head moved on while this dispatched run checked the pinned one: the run of
        # the new head reports; this one's report stays in its summary.
        message = f"#{event.command_pr} has a new head since this run's {str(report.head_sha)[:12]}: nothing posted"
        actions.annotate("notice", message)
        click.echo(message)
        return
    body = render_comment(report, max_chars=MAX_COMMENT - stamp_length(run_id))
    held = []
    for number in numbers:
        sticky = upsert_sticky(client, number, body, marker=COMMENT_MARKER, run_id=run_id, bot_login=bot_login)
        held.append(sticky)
        click.echo(f"#{number}: comment {sticky.id}")
    newer = [s.holds_run for s in held if not s.ours]
    if sha and newer:
        # The status follows the comment: an older run finishing late (a re-run keeps its
        # GITHUB_RUN_ID) must not put its verdict next to a newer run's report.
        click.echo(f"status left as set by run {max(newer)}, whose report the comment holds (this is run {run_id})")
    elif sha and (holder := _newer_status(client, sha, event.run_url)):
        click.echo(f"status on {sha} left as a newer run set it ({holder})")
    elif sha:
        client.set_status(
            sha, report.verdict, status_description(report.verdict, report.headline), event.run_url or report.run_url
        )
        click.echo(f"status {report.verdict} on {sha}")
    if event.command_comment:
        click.echo(finish_command(client, event.command_comment, reported=True, pulls=numbers))


@github.command()
@click.pass_obj
@_github_errors
def pending(obj: Context) -> None:
    """On a conformance run's `workflow_run` event: `pending` when it starts, cleared if it is cancelled."""
    from bot.publish.pending import ConformanceRun, update

    try:
        run = ConformanceRun.from_payload(obj.event())
    except ValueError as exc:
        raise BotError(str(exc)) from None
    click.echo(update(obj.client(), run))


def _queue_run(obj: Context, verdict: str) -> tuple[str, tuple[int, ...]] | None:
    """A merge-queue run's commit, and the PR to comment on: only when a cell broke (None: not a queue run)."""
    from bot.publish.pending import queue_pr

    run = (obj.event() if obj.event_path else {}).get("workflow_run")
    if not isinstance(run, dict) or run.get("event") != "merge_group" or not isinstance(run.get("head_sha"), str):
        return None
    number = queue_pr(run.get("head_branch")) if verdict == "failure" else None
    return run["head_sha"], ((number,) if number else ())


def _newer_status(client, sha: str, run_url: str | None) -> str | None:
    """The link of the status a newer run set on `sha`, which this run's verdict must not replace."""
    from bot.publish.pending import may_set_verdict, run_of

    if not run_of(run_url):
        return None  # not a workflow_run event: no run of GitHub's record to order by
    current = client.current_status(sha)
    return None if may_set_verdict(current, run_of(run_url)) else current.target_url


def _pulls_of_run(client, event, report_sha: str | None, pr: int | None) -> tuple[str | None, tuple[int, ...]]:
    """The commit and PR numbers a finished run reported on, from the event (never from the report alone)."""
    sha = event.head_sha or report_sha
    if pr:
        return sha, (pr,)
    if event.pr_numbers:
        return sha, event.pr_numbers
    if event.command_pr:
        # A dispatched run: its title (from the default branch's workflow file) names the PR;
        # the event's commit is the default branch's, so the report's pinned head is checked
        # against the PR's before the PR gets its comment and status.
        pull = client.pull_request(event.command_pr)
        if report_sha and pull.head_sha == report_sha:
            return report_sha, (pull.number,)
        return None, ()
    if event.head_owner and event.head_branch:
        # A fork PR's workflow_run event lists no pull request: its head owner and branch find it.
        found = [p for p in client.pulls_from(event.head_owner, event.head_branch) if p.head_sha == sha]
        if found:
            return sha, tuple(p.number for p in found)
    raise BotError(f"no open pull request has head {sha}; pass --pr")


def _comment_event(obj: Context):
    from bot.publish.events import CommentEvent, EventError

    try:
        return CommentEvent.from_payload(obj.event())
    except EventError as exc:
        raise BotError(str(exc)) from None


def _emit(outcome, out: Path | None) -> None:
    actions = _actions()
    click.echo(outcome.note)
    actions.set_output("accepted", "true" if outcome.accepted else "false")
    if outcome.request is not None:
        text = outcome.request.to_json()
        for name, value in (
            ("request", text),
            ("kind", outcome.request.kind),
            ("pr", str(outcome.request.pr)),
            ("sha", outcome.request.head_sha or ""),
        ):
            actions.set_output(name, value)
        if out:
            out.write_text(text + "\n", encoding="utf-8")


@github.command()
@click.option("--dispatch", "workflow", default=None, help="Workflow file to dispatch with the request.")
@click.option(
    "--reports",
    default=None,
    help="Workflow whose report artifacts hold the proposals (a fork's apply gets the patch; default: --dispatch).",
)
@click.option(
    "--out", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Write the request JSON here."
)
@click.pass_obj
@_github_errors
def command(obj: Context, workflow: str | None, reports: str | None, out: Path | None) -> None:
    """Answer an `/export-check` comment (issue_comment event): check, acknowledge, pin the head, dispatch."""
    from bot.publish.respond import handle_command

    event = _comment_event(obj)
    if event.ignored_because():  # no client needed: nothing is said on GitHub
        click.echo(f"ignored: {event.ignored_because()}")
        _actions().set_output("accepted", "false")
        return
    index = _command_index(obj.config)
    outcome = handle_command(
        obj.client(),
        event,
        model_classes=index.classes,
        model_types=frozenset(index.classes_by_type),
        dispatch=workflow,
        reports=reports,
    )
    _emit(outcome, out)


def _command_index(config: Path | None):
    """The model classes and types a command may name: the checkout's, read as text, else the installed ones.

    The command job installs the light part only, so no transformers: the default branch it
    checks out (the folder of its pyproject, where `--config` points, or the working folder)
    is where the names come from. Outside a checkout, the installed Transformers'.
    """
    from bot.models.index import build_index, installed_index
    from bot.select.tree import MODELS_DIR

    models = (config.parent if config else Path.cwd()) / MODELS_DIR
    return build_index(models) if models.is_dir() else installed_index()


@github.command()
@click.option(
    "--workflow", default="export-conformance.yml", show_default=True, help="Workflow whose report is applied."
)
@click.option("--dispatch", default=None, help="Workflow to dispatch on the new commit.")
@click.option("--skiplists-path", default="skiplists", show_default=True, help="Skiplist folder in the repository.")
@click.pass_obj
@_github_errors
def apply(obj: Context, workflow: str, dispatch: str | None, skiplists_path: str) -> None:
    """`/export-check apply`: commit the PR's latest proposed skiplist patch to its branch (same repository only)."""
    from bot.publish.command import ALLOWED_PERMISSIONS, first_line
    from bot.publish.respond import Outcome, apply_command

    event = _comment_event(obj)
    if event.ignored_because() or first_line(event.body).split()[:2] != ["/export-check", "apply"]:
        _emit(Outcome(False, "ignored: not an /export-check apply comment"), None)
        return
    client = obj.client()
    # `github command` answered refusals, closed PRs and forks (with the patch) already: this
    # job checks again and stays quiet, so a comment gets one reply.
    permission = client.permission(event.author)
    if not permission.allows(ALLOWED_PERMISSIONS):
        _emit(Outcome(False, f"ignored: {event.author} has {permission.role} (refused by `github command`)"), None)
        return
    pull = client.pull_request(event.number)
    if pull.is_fork or pull.state != "open":
        _emit(Outcome(False, "ignored: a fork or closed PR (answered by `github command`)"), None)
        return
    outcome = apply_command(
        client,
        event,
        pull,
        workflow=workflow,
        skiplists_path=skiplists_path,
        dispatch=dispatch,
    )
    _emit(outcome, None)
    if not outcome.accepted:
        raise SystemExit(EXIT_FAILURE)


@github.command("verify-sha")
@click.option("--pr", type=int, required=True)
@click.option("--sha", required=True, help="Head SHA pinned when the command was accepted.")
@click.pass_obj
@_github_errors
def verify_sha(obj: Context, pr: int, sha: str) -> None:
    """Stop (exit 1) when the PR head moved away from the pinned SHA."""
    from bot.publish.respond import head_moved

    moved = head_moved(obj.client(), pr, sha)
    if moved:
        _actions().annotate("error", moved)
        click.echo(moved, err=True)
        raise SystemExit(EXIT_FAILURE)
    click.echo(f"#{pr} head is still {sha}")


@github.command()
@click.option("--workflow", default="export-baseline.yml", show_default=True)
@click.option("--artifact", default="export-baseline", show_default=True)
@click.option("--branch", default="main", show_default=True)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("base"), show_default=True)
@click.pass_obj
@_github_errors
def baseline(obj: Context, workflow: str, artifact: str, branch: str, out: Path) -> None:
    """Download the baseline JUnit of the latest successful run of WORKFLOW on BRANCH into --out."""
    from bot.publish.baseline import download_baseline

    run = download_baseline(obj.client(), workflow, out, name=artifact, branch=branch)
    actions = _actions()
    actions.set_output("found", "true" if run else "false")
    if run is None:
        actions.annotate("notice", f"no baseline yet: no successful {workflow} run on {branch} has {artifact}")
        click.echo("no baseline yet")
        raise SystemExit(EXIT_OK)
    actions.set_output("sha", run.head_sha)
    click.echo(f"baseline of {run.head_sha} (run {run.id}) in {out}")


@github.command()
@click.option("--workflow", default="export-baseline.yml", show_default=True)
@click.option("--artifact", default="export-baseline", show_default=True)
@click.option("--branch", default="main", show_default=True)
@click.option("--count", type=click.IntRange(min=1), default=29, show_default=True, help="Earlier sweeps to fetch.")
@click.option(
    "--run-id", type=int, envvar="GITHUB_RUN_ID", default=0, help="This run, left out (default: GITHUB_RUN_ID)."
)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("history"), show_default=True)
@click.pass_obj
@_github_errors
def reports(obj: Context, workflow: str, artifact: str, branch: str, count: int, run_id: int, out: Path) -> None:
    """The report.json of the last COUNT sweeps (runs that uploaded the artifact) before this one: the dashboard's history (`export-bot site`)."""
    import json

    from bot.publish.obsolete_skips import history_json

    found = history_json(obj.client(), workflow, artifact, branch=branch, count=count, exclude_run=run_id)
    # (run, report) pairs, oldest first: folder names keep that order for reports without `created`
    for index, (_run, data) in enumerate(found):
        folder = out / f"sweep-{index:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "report.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    click.echo(f"{len(found)} earlier {workflow} reports in {out}")


@github.command("obsolete-skips")
@click.option("--workflow", default="export-baseline.yml", show_default=True)
@click.option("--artifact", default="export-baseline", show_default=True)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="This sweep's report.json (default: the artifact of this run, GITHUB_RUN_ID).",
)
@click.option("--run-id", type=int, envvar="GITHUB_RUN_ID", default=0)
@click.option("--min-passes", type=int, default=None, help="Consecutive passing probes (default: settings, 3).")
@click.option("--branch", default="main", show_default=True)
@click.option(
    "--skiplists",
    "skiplists_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("skiplists"),
    show_default=True,
    help="The checkout's skiplist folder the proposal starts from.",
)
@click.option("--skiplists-path", default="skiplists", show_default=True, help="That folder's path in the repository.")
@click.option(
    "--run-url", default=None, help="This sweep's run page (default: built from --run-id, else the report's)."
)
@click.option("--server-url", envvar="GITHUB_SERVER_URL", default="https://github.com", help="GITHUB_SERVER_URL.")
@click.pass_obj
@_github_errors
def obsolete_skips(
    obj: Context,
    workflow: str,
    artifact: str,
    report_path: Path | None,
    run_id: int,
    min_passes: int | None,
    branch: str,
    skiplists_dir: Path,
    skiplists_path: str,
    run_url: str | None,
    server_url: str,
) -> None:
    """Propose with the probe history, then open, update or close the one obsolete-skip PR."""
    from bot.diff.model import Report, ReportError, load_report
    from bot.publish.obsolete_skips import (
        Evidence,
        current_report_json,
        history_json,
        obsolete_files,
        render_body,
        sync_pull_request,
        title_for,
    )
    from bot.settings import load_settings

    k = min_passes or load_settings(obj.config).min_passes
    client = obj.client()
    try:
        report = (
            load_report(report_path)
            if report_path
            else Report.from_json(current_report_json(client, run_id, artifact), where=f"run {run_id}'s {artifact}")
        )
        earlier = history_json(client, workflow, artifact, branch=branch, count=k - 1, exclude_run=run_id)
        history = [Report.from_json(d, where=f"{artifact} of run {run.id}") for run, d in earlier]
    except ReportError as exc:
        raise BotError(str(exc)) from None
    edits, files = obsolete_files(report, history, skiplists_dir, min_passes=k, repo_folder=skiplists_path)
    # The K runs that are the evidence: the earlier sweeps, then this one.
    # This run's page: GITHUB_RUN_ID names it; the report's own URL only when there is no id.
    own = f"{server_url.rstrip('/')}/{client.repository}/actions/runs/{run_id}" if run_id else ""
    this_url = run_url or own or report.run_url or ""
    runs = [Evidence(run.id, run.url) for run, _ in earlier] + ([Evidence(run_id, this_url)] if run_id else [])
    entries = [e.to_json() for e in edits]
    body = render_body(entries, min_passes=k, runs=runs)
    click.echo(sync_pull_request(client, files, body, title=title_for(entries), base=branch))
