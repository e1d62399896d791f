"""A GitHub-shaped HTTP server on 127.0.0.1: the REST subset the bot uses, stateful, with fault injection."""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from tests.github import payloads as P


def STAMP_NOW() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


SECONDARY_RATE_LIMIT = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
BOT = "github-actions[bot]"


@dataclass
class Fault:
    kind: str  # "status", "rate_limit", "reset", "truncate", "slow", "gate"
    method: str
    path: re.Pattern
    times: int
    status: int = 502
    seconds: float = 0.0
    barrier: threading.Barrier | None = None
    after: bool = False  # "status": the request was processed, then the answer was lost (a proxy's 502)
    action: object = None  # "hook": called with the fake before the request is processed (someone else acts)
    body: dict | None = None  # "status": GitHub's error body for that status (default: a bare 5xx body)


@dataclass
class Budget:
    """GitHub's primary rate limit for the token: `limit` requests per `window` seconds.

    `GITHUB_TOKEN` may make 1,000 requests an hour per repository ("Rate limits for the REST API",
    primary rate limit for GITHUB_TOKEN), shared by every workflow. Every answer says where the
    budget stands (`x-ratelimit-*`); once it is spent, requests are refused with 403 until the
    window resets.
    """

    limit: int = 1000
    window: float = 3600.0
    used: int = 0
    started: float = field(default_factory=time.time)
    refused: int = 0

    def take(self) -> tuple[bool, dict[str, str]]:
        """Count one request: whether it may be answered, and the headers GitHub sends with the answer."""
        now = time.time()
        if now >= self.started + self.window:
            self.started, self.used = now, 0
        allowed = self.used < self.limit
        self.used += allowed
        self.refused += not allowed
        headers = {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.limit - self.used),
            "X-RateLimit-Used": str(self.used),
            "X-RateLimit-Reset": str(int(self.started + self.window)),
            "X-RateLimit-Resource": "core",
        }
        return allowed, headers


@dataclass
class Concurrency:
    """GitHub's concurrency groups ("Control the concurrency of workflows and jobs"): per group, at
    most one run in progress and one pending. A run arriving in a busy group replaces (cancels) the
    pending one; with `cancel-in-progress` it cancels the running one too and starts at once."""

    running: dict[str, int] = field(default_factory=dict)
    pending: dict[str, int] = field(default_factory=dict)
    cancelled: list[int] = field(default_factory=list)

    def arrive(self, run: int, group: str | None, *, cancel_in_progress: bool = False) -> tuple[str, list[int]]:
        """The run's state (`in_progress` or `pending`) and the runs its arrival cancels."""
        if not group:
            return "in_progress", []
        dropped = [self.pending.pop(group)] if group in self.pending else []
        if group not in self.running:
            self.running[group] = run
            return "in_progress", dropped
        if cancel_in_progress:
            dropped.append(self.running[group])
            self.running[group] = run
        else:
            self.pending[group] = run
        self.cancelled += dropped
        return ("in_progress" if cancel_in_progress else "pending"), dropped

    def finish(self, run: int) -> int | None:
        """The run ended: its group's pending run (if any) starts, and is returned."""
        for group, holder in list(self.running.items()):
            if holder == run:
                del self.running[group]
                if group in self.pending:
                    self.running[group] = self.pending.pop(group)
                    return self.running[group]
        return None


@dataclass
class Caches:
    """GitHub Actions' dependency cache, scoped by ref ("Caching dependencies to speed up workflows",
    restrictions for accessing a cache). A run restores what runs on its own ref saved, then, for a
    pull request, what its base branch saved, then what the default branch saved; it saves only into
    its own ref. A branch never reads a sibling's, and the default branch reads only its own: one
    saved there is read by every branch and PR. A key is saved once per ref (a cache is immutable)."""

    default: str = "refs/heads/main"
    entries: list[dict] = field(default_factory=list)  # {key, ref, data}, oldest first

    def readable(self, ref: str, *, base_ref: str | None = None) -> list[str]:
        """The refs whose caches a run on `ref` restores, in the order GitHub searches them."""
        return list(dict.fromkeys(r for r in (ref, base_ref, self.default) if r))

    def save(self, key: str, ref: str, data: bytes = b"") -> bool:
        """Whether the cache was saved (False: this ref already holds the key, and keeps it)."""
        if any(e["key"] == key and e["ref"] == ref for e in self.entries):
            return False
        self.entries.append({"key": key, "ref": ref, "data": data})
        return True

    def restore(self, key: str, ref: str, *, base_ref: str | None = None, restore_keys: tuple[str, ...] = ()):
        """The entry a run on `ref` gets for `key` (then the newest for each restore-key prefix), or None."""
        for scope in self.readable(ref, base_ref=base_ref):
            found = [e for e in self.entries if e["ref"] == scope and e["key"] == key]
            for prefix in restore_keys:
                found = found or [e for e in self.entries if e["ref"] == scope and e["key"].startswith(prefix)]
            if found:
                return found[-1]
        return None


# Since "Read-only Actions cache for untrusted triggers" (GitHub changelog, 2026-06-26), a run's cache
# token is read-only when someone without write access can trigger its event and the run is in the
# default branch's scope (pull_request_target, issue_comment, workflow_run); the trusted triggers keep
# a read-write token there. A fork's `pull_request` run is read-only too (its own PR's scope, which
# nothing else reads, either way).
TRUSTED_CACHE_EVENTS = frozenset(
    {"push", "schedule", "workflow_dispatch", "repository_dispatch", "delete", "registry_package", "page_build"}
)


def cache_write_ref(event: str, *, fork: bool = False, pr: int = 1, branch: str = "main") -> str | None:
    """The scope a run's cache token may save into, or None when GitHub gives it a read-only token.

    Code running in the job can reach that token (the runner hands it to every step), whatever the
    workflow's own cache steps say: what matters is the scope, not the `cache:` line."""
    ref = cache_ref(event, pr=pr, branch=branch)
    if event == "pull_request":
        return None if fork else ref
    if event == "merge_group" or event in TRUSTED_CACHE_EVENTS:
        return ref
    return None  # an untrusted trigger in the default branch's scope


def cache_ref(event: str, *, pr: int = 1, branch: str = "main") -> str:
    """The ref a run's caches are scoped to: a pull request's test merge, a queue's branch, or the
    branch the run is on (a dispatched run's ref; the default branch for schedule, issue_comment and
    workflow_run, which run on it)."""
    if event == "pull_request":
        return f"refs/pull/{pr}/merge"
    if event == "merge_group":
        return f"refs/heads/gh-readonly-queue/main/pr-{pr}-{'0' * 40}"
    if event in ("push", "workflow_dispatch"):
        return f"refs/heads/{branch}"
    return "refs/heads/main"


class ArtifactConflict(Exception):
    """actions/upload-artifact v4's refusal of a name the run already holds (unless `overwrite: true`)."""


class RerunRefused(Exception):
    """GitHub re-runs only a completed run."""


PRIMARY_RATE_LIMIT = "API rate limit exceeded for installation. If you reach out to GitHub Support for help, please include the request ID."


@dataclass
class Sent:
    method: str
    template: str
    status: int
    body: bytes


@dataclass
class State:
    comments: dict[int, dict] = field(default_factory=dict)  # id → {issue, body, user, created}
    issues: dict[int, dict] = field(default_factory=dict)  # number → {"pull": number or None}
    pulls: dict[int, dict] = field(default_factory=dict)
    statuses: dict[str, list[dict]] = field(default_factory=dict)
    reactions: dict[int, list[str]] = field(default_factory=dict)
    permissions: dict[str, str] = field(default_factory=dict)
    blobs: dict[str, bytes] = field(default_factory=dict)
    trees: dict[str, dict[str, str]] = field(default_factory=dict)  # sha → path → blob sha (flat)
    commits: dict[str, dict] = field(default_factory=dict)
    refs: dict[str, str] = field(default_factory=dict)  # "heads/main" → sha
    runs: list[dict] = field(default_factory=list)
    artifacts: dict[int, dict] = field(default_factory=dict)
    dispatches: list[dict] = field(default_factory=list)
    commit_pulls: dict[str, list[int]] = field(default_factory=dict)  # commit SHA → the PRs GitHub associates
    commit_authors: dict[str, str | None] = field(default_factory=dict)  # commit SHA → its GitHub author (None: none)
    check_runs: dict[int, dict] = field(default_factory=dict)  # id → the run, its `annotations` kept beside
    next_id: int = 1000


# The `run-name` of export-conformance.yml for a dispatched run: GitHub gives it to the run it starts.
RUN_NAMES = {
    "export-conformance.yml": lambda inputs: (
        f"export-conformance #{inputs.get('pr', '')}: /export-check {_kind(inputs)} (comment {inputs.get('comment', '')})"
    ),
}


def _kind(inputs: dict) -> str:
    """`fromJSON(inputs.request).kind`, as the caller's run-name reads it ('' when the request names none)."""
    try:
        kind = json.loads(inputs.get("request") or "{}").get("kind")
    except (ValueError, AttributeError):
        return ""
    return kind if isinstance(kind, str) else ""


def _git_sha(kind: str, data: bytes) -> str:
    return hashlib.sha1(f"{kind} {len(data)}\0".encode() + data).hexdigest()


class FakeGitHub:
    """State + routes. `url` is the base URL PyGithub gets; `sent` logs every response for validation."""

    def __init__(self, repo: str = "Codertocat/Hello-World", token: str = "t0ken"):
        self.full_name = repo
        self.token = token
        self.state = State()
        self.lock = threading.RLock()
        self.faults: list[Fault] = []
        self.sent: list[Sent] = []
        self.requests: list[tuple[str, str]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self.repo = P.repository(repo, 1296269, self.url)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.bot = P.user(BOT, 41898282, "Bot")
        self.created_comments = 0
        # GitHub lists a dispatched run only a little after accepting the dispatch: the run is
        # hidden from the next `run_list_lag` run listings.
        self.run_list_lag = 0
        # A repository whose settings forbid GitHub Actions to open pull requests.
        self.pull_creation_forbidden = False
        self.budget = Budget()  # the token's primary rate limit, as GITHUB_TOKEN's
        self.concurrency = Concurrency()  # the workflows' concurrency groups
        self.caches = Caches()  # the Actions cache, by ref
        # The workflow a push by the workflow's token to an open PR's branch (or a PR it opens) starts,
        # awaiting approval (GitHub's changelog, 2026-06-11; `gated_run`); None: no such run is made.
        self.bot_push_workflow: str | None = None
        # GitHub Pages: its source ("workflow": GitHub Actions, "legacy": a branch), None when off.
        self.pages: str | None = "workflow"

    # --- lifecycle and faults ---------------------------------------------------------------
    def start(self) -> FakeGitHub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def inject(
        self,
        kind: str,
        *,
        method: str = ".*",
        path: str = ".*",
        times: int = 1,
        status: int = 502,
        seconds: float = 1.0,
        after: bool = False,
        body: dict | None = None,
    ) -> None:
        """`seconds`: the delay of "slow", the `Retry-After` of "rate_limit"; `body`: the error body of
        "status" (GitHub's own shape for that status: the responses are checked against its description)."""
        self.faults.append(Fault(kind, method, re.compile(path), times, status, seconds, after=after, body=body))

    def gate(self, *, method: str, path: str, parties: int) -> None:
        """Hold the answers to the next `parties` matching requests until all have arrived: a deterministic race.

        Each is answered from the state it arrived to, so none of them sees what another
        client does once released.
        """
        barrier = threading.Barrier(parties, timeout=120)
        self.faults.append(Fault("gate", method, re.compile(path), parties, barrier=barrier))

    def before(self, *, method: str, path: str, action, times: int = 1) -> None:
        """Run `action(fake)` just before the next `times` matching requests are processed: another
        actor (a user deleting a comment, a push) acting between two of the bot's requests."""
        self.faults.append(Fault("hook", method, re.compile(path), times, action=action))

    def _take_fault(self, method: str, path: str) -> Fault | None:
        with self.lock:
            for fault in self.faults:
                if fault.times > 0 and re.fullmatch(fault.method, method) and fault.path.search(path):
                    fault.times -= 1
                    return fault
        return None

    # --- seeding ----------------------------------------------------------------------------
    def new_id(self) -> int:
        with self.lock:
            self.state.next_id += 1
            return self.state.next_id

    def commit(self, files: dict[str, str], parents: tuple[str, ...] = (), message: str = "seed") -> str:
        tree = {}
        if parents:
            tree.update(self.state.trees[self.state.commits[parents[0]]["tree"]])
        for path, text in files.items():
            data = text.encode()
            sha = _git_sha("blob", data)
            self.state.blobs[sha] = data
            tree[path] = sha
        return self._store_commit(self._store_tree(tree), list(parents), message)

    def _store_tree(self, tree: dict[str, str]) -> str:
        sha = _git_sha("tree", json.dumps(sorted(tree.items())).encode())
        self.state.trees[sha] = dict(tree)
        return sha

    def _store_commit(self, tree: str, parents: list[str], message: str) -> str:
        sha = _git_sha("commit", json.dumps([tree, parents, message, self.new_id()]).encode())
        self.state.commits[sha] = {"tree": tree, "parents": parents, "message": message}
        return sha

    def files_at(self, ref_or_sha: str) -> dict[str, str]:
        sha = self.state.refs.get(f"heads/{ref_or_sha}", ref_or_sha)
        tree = self.state.trees[self.state.commits[sha]["tree"]]
        return {path: self.state.blobs[b].decode() for path, b in tree.items()}

    def open_pull(
        self,
        number: int,
        head_ref: str,
        *,
        fork: str | None = None,
        head_sha: str | None = None,
        title: str = "A change",
        user: str = "Codertocat",
    ) -> None:
        """A PR from `head_ref` (a branch here, or of `fork` with a fixed head SHA)."""
        self.state.issues[number] = {"pull": number}
        self.state.pulls[number] = {
            "number": number,
            "head_ref": head_ref,
            "fork": fork,
            "sha": head_sha,
            "base_ref": "main",
            "state": "open",
            "merged": False,
            "title": title,
            "body": "",
            "user": user,
            "created": STAMP_NOW(),
        }

    def close_pull(self, number: int, *, merged: bool = False, merged_by: str = "octocat") -> None:
        """Closed, or merged by `merged_by` (GitHub's full PR answer says who; its list answers do not)."""
        self.state.pulls[number].update(state="closed", merged=merged, merged_by=merged_by if merged else None)

    def add_run(
        self,
        workflow: str,
        *,
        head_sha: str,
        branch: str = "main",
        conclusion: str = "success",
        artifacts: dict[str, bytes] | None = None,
        event: str = "push",
        status: str = "completed",
        title: str = "export",
        head_repo: str | None = None,
        path: str | None = None,
    ) -> int:
        """`head_repo`: the fork a fork PR's run came from (default: this repository); `path`: the
        workflow file the run ran (default: `.github/workflows/<workflow>`)."""
        run_id = self.new_id()
        ids = []
        for name, data in (artifacts or {}).items():
            aid = self.new_id()
            self.state.artifacts[aid] = {"name": name, "run": run_id, "data": data, "expired": False}
            ids.append(aid)
        self.state.runs.append(
            {
                "id": run_id,
                "workflow": workflow,
                "head_sha": head_sha,
                "branch": branch,
                "conclusion": conclusion if status == "completed" else None,
                "status": status,
                "event": event,
                "title": title,
                "created": STAMP_NOW(),
                "artifacts": ids,
                "hidden_for": 0,
                "head_repo": head_repo or self.full_name,
                "path": path or f".github/workflows/{workflow}",
                "attempt": 1,
                "attempts": [],  # the earlier attempts, as they ended: {status, conclusion, created}
            }
        )
        return run_id

    def run(self, run_id: int) -> dict:
        return next(r for r in self.state.runs if r["id"] == run_id)

    def rerun(self, run_id: int) -> int:
        """A re-run ("Re-running workflows and jobs"): the same run id, commit and ref, the next
        `run_attempt`, queued again. The attempts before stay readable (`…/attempts/<n>`), and so do
        their artifacts: they belong to the run, not to an attempt."""
        run = self.run(run_id)
        if run["status"] != "completed":
            raise RerunRefused(f"run {run_id} is {run['status']}")
        run["attempts"].append({k: run[k] for k in ("status", "conclusion", "created")})
        run.update(attempt=run["attempt"] + 1, status="queued", conclusion=None, created=STAMP_NOW())
        return run["attempt"]

    def approve(self, run_id: int) -> None:
        """A maintainer approves a run that waits: a first-time contributor's (`completed` /
        `action_required`, "Approving workflow runs from public forks") is queued, one waiting on an
        environment's reviewers (`waiting`) goes on."""
        run = self.run(run_id)
        if run["conclusion"] == "action_required":
            run.update(status="queued", conclusion=None)
        elif run["status"] == "waiting":
            run.update(status="in_progress")
        else:
            raise ValueError(f"run {run_id} waits for no approval")

    def gated_run(self, branch: str) -> list[int]:
        """The runs a push with `GITHUB_TOKEN` to `branch` starts ("Pull requests created by GitHub Actions
        can run workflows with approval", GitHub's changelog, 2026-06-11): each open same-repository PR on
        it gets a `pull_request` run of `bot_push_workflow` that waits for a maintainer with write access,
        recorded `completed`/`action_required` as a first-time contributor's run is, until `approve`."""
        if not self.bot_push_workflow:
            return []
        sha = self.state.refs[f"heads/{branch}"]
        return [
            self.add_run(
                self.bot_push_workflow,
                head_sha=sha,
                branch=branch,
                event="pull_request",
                status="completed",
                conclusion="action_required",
            )  # fmt: skip
            for pr in self.state.pulls.values()
            if not pr["fork"] and pr["state"] == "open" and pr["head_ref"] == branch
        ]

    def upload_artifact(self, run_id: int, name: str, data: bytes, *, overwrite: bool = False) -> int:
        """actions/upload-artifact v4: names are unique in a run, across its attempts. A name the run
        holds is refused (409), unless `overwrite`, which deletes the old artifact first."""
        held = [aid for aid, a in self.state.artifacts.items() if a["run"] == run_id and a["name"] == name]
        if held and not overwrite:
            raise ArtifactConflict(
                f"(409) Conflict: an artifact with this name already exists on the workflow run: {name}"
            )
        for aid in held:
            del self.state.artifacts[aid]
        aid = self.new_id()
        self.state.artifacts[aid] = {"name": name, "run": run_id, "data": data, "expired": False}
        return aid

    def run_event(self, run_id: int, action: str) -> dict:
        """The `workflow_run` event GitHub delivers for the run as it stands (its current attempt)."""
        event = P.example("workflow_run", "completed")
        event.update(action=action, repository=self.repo, workflow_run=self.run_obj(self.run(run_id)))
        return event

    def add_artifact(self, run_id: int, name: str, data: bytes) -> None:
        self.state.artifacts[self.new_id()] = {"name": name, "run": run_id, "data": data, "expired": False}

    def finish_run(self, run_id: int, conclusion: str) -> int | None:
        """The run completes; its concurrency group's pending run starts (returned, when there is one)."""
        run = next(r for r in self.state.runs if r["id"] == run_id)
        run.update(status="completed", conclusion=conclusion)
        started = self.concurrency.finish(run_id)
        if started is not None:
            next(r for r in self.state.runs if r["id"] == started).update(status="in_progress")
        return started

    def arrive(self, run_id: int, group: str | None, *, cancel_in_progress: bool = False) -> list[int]:
        """A run enters its concurrency group: pending or in progress, and the runs GitHub cancels for it."""
        state, dropped = self.concurrency.arrive(run_id, group, cancel_in_progress=cancel_in_progress)
        for run in self.state.runs:
            if run["id"] == run_id:
                run.update(status=state if state == "in_progress" else "pending", conclusion=None)
            elif run["id"] in dropped:
                run.update(status="completed", conclusion="cancelled")
        return dropped

    def bot_comments(self, number: int) -> list[dict]:
        return [c for _, c in sorted(self.state.comments.items()) if c["issue"] == number and c["user"] == BOT]

    # --- objects as GitHub returns them -----------------------------------------------------
    def api(self, path: str) -> str:
        return f"{self.url}/repos/{self.full_name}{path}"

    def user_obj(self, login: str) -> dict:
        return self.bot if login == BOT else P.user(login, 1000 + sum(map(ord, login)))

    def comment_obj(self, cid: int) -> dict:
        c = self.state.comments[cid]
        obj = P.example("issue_comment", "created")["comment"]
        obj.update(
            id=cid,
            node_id=f"IC_{cid}",
            body=c["body"],
            user=self.user_obj(c["user"]),
            url=self.api(f"/issues/comments/{cid}"),
            issue_url=self.api(f"/issues/{c['issue']}"),
            html_url=f"{self.repo['html_url']}/pull/{c['issue']}#issuecomment-{cid}",
            created_at=c["created"],
            updated_at=c["created"],
            author_association="MEMBER",
        )
        obj.pop("reactions", None)
        return obj

    def pull_head_sha(self, pr: dict) -> str:
        return pr["sha"] if pr["fork"] else self.state.refs[f"heads/{pr['head_ref']}"]

    def pull_obj(self, number: int) -> dict:
        pr = self.state.pulls[number]
        obj = P.example("pull_request", "opened")["pull_request"]
        head_repo = P.repository(pr["fork"], 4242, self.url) if pr["fork"] else self.repo
        obj.update(
            number=number,
            id=number + 10**6,
            node_id=f"PR_{number}",
            state=pr["state"],
            title=pr["title"],
            body=pr["body"],
            user=self.user_obj(pr["user"]),
            url=self.api(f"/pulls/{number}"),
            html_url=f"{self.repo['html_url']}/pull/{number}",
            auto_merge=None,
            issue_url=self.api(f"/issues/{number}"),
            merged=pr["merged"],
            merged_by=self.user_obj(pr["merged_by"]) if pr.get("merged_by") else None,
            merged_at=P.STAMP if pr["merged"] else None,
            closed_at=P.STAMP if pr["state"] == "closed" else None,
            created_at=pr["created"],
            draft=pr.get("draft", False),
            requested_reviewers=[self.user_obj(login) for login in pr.get("requested_reviewers", ())],
        )
        head_sha = self.pull_head_sha(pr)
        obj["head"].update(
            ref=pr["head_ref"],
            sha=head_sha,
            repo=head_repo,
            user=head_repo["owner"],
            label=f"{head_repo['owner']['login']}:{pr['head_ref']}",
        )
        obj["base"].update(
            ref=pr["base_ref"],
            sha=self.state.refs["heads/main"],
            repo=self.repo,
            user=self.repo["owner"],
            label=f"{self.repo['owner']['login']}:{pr['base_ref']}",
        )
        return obj

    def run_pulls(self, run: dict) -> list[int]:
        """The PRs GitHub lists on a run: open ones whose head is the run's branch *in this repository*
        at the run's commit. A fork's run lists none, whatever its branch is called."""
        if run.get("head_repo", self.full_name) != self.full_name:
            return []
        return [
            n
            for n, pr in sorted(self.state.pulls.items())
            if not pr["fork"]
            and pr["state"] == "open"
            and pr["head_ref"] == run["branch"]
            and self.pull_head_sha(pr) == run["head_sha"]
        ]

    def run_obj(self, run: dict, attempt: int | None = None) -> dict:
        """The run as GitHub returns it; `attempt`: as that attempt ended (`…/attempts/<n>`)."""
        obj = P.example("workflow_run", "completed")["workflow_run"]
        rid = run["id"]
        current = run.get("attempt", 1)
        if attempt is not None and attempt < current:
            run = {**run, **run["attempts"][attempt - 1]}
        shown = attempt or current
        head_repo = run.get("head_repo", self.full_name)
        head_repository = self.repo if head_repo == self.full_name else P.repository(head_repo, 4242, self.url)
        base = {"id": self.repo["id"], "url": self.repo["url"], "name": self.repo["name"]}
        pulls = [
            {
                "id": n + 10**6,
                "number": n,
                "url": self.api(f"/pulls/{n}"),
                "head": {"ref": run["branch"], "sha": run["head_sha"], "repo": base},
                "base": {"ref": "main", "sha": self.state.refs["heads/main"], "repo": base},
            }
            for n in self.run_pulls(run)
        ]
        obj.update(
            id=rid,
            node_id=f"WR_{rid}",
            head_sha=run["head_sha"],
            head_branch=run["branch"],
            run_number=rid,
            display_title=run["title"],
            path=run.get("path", f".github/workflows/{run['workflow']}"),
            event=run["event"],
            status=run["status"],
            conclusion=run["conclusion"],
            url=self.api(f"/actions/runs/{rid}"),
            html_url=f"{self.repo['html_url']}/actions/runs/{rid}",
            pull_requests=pulls,
            artifacts_url=self.api(f"/actions/runs/{rid}/artifacts"),
            repository=self.repo,
            head_repository=head_repository,
            created_at=run["created"],
            updated_at=run["created"],
            run_started_at=run["created"],
            run_attempt=shown,
            previous_attempt_url=self.api(f"/actions/runs/{rid}/attempts/{shown - 1}") if shown > 1 else None,
            rerun_url=self.api(f"/actions/runs/{rid}/rerun"),
        )
        return obj

    def artifact_obj(self, aid: int) -> dict:
        a = self.state.artifacts[aid]
        return {
            "id": aid,
            "node_id": f"A_{aid}",
            "name": a["name"],
            "size_in_bytes": len(a["data"]),
            "url": self.api(f"/actions/artifacts/{aid}"),
            "archive_download_url": self.api(f"/actions/artifacts/{aid}/zip"),
            "expired": a["expired"],
            # Seeded artifacts may say when they were made (a busy repository's backlog); others are new.
            "created_at": a.get("created") or STAMP_NOW(),
            "expires_at": P.STAMP,
            "updated_at": P.STAMP,
            "workflow_run": {
                "id": a["run"],
                "repository_id": self.repo["id"],
                "head_repository_id": self.repo["id"],
                "head_branch": "main",
                "head_sha": "0" * 40,
            },
        }

    def ref_obj(self, ref: str) -> dict:
        sha = self.state.refs[ref]
        return {
            "ref": f"refs/{ref}",
            "node_id": f"REF_{ref}",
            "url": self.api(f"/git/refs/{ref}"),
            "object": {"type": "commit", "sha": sha, "url": self.api(f"/git/commits/{sha}")},
        }

    def commit_obj(self, sha: str) -> dict:
        c = self.state.commits[sha]
        person = {"name": "export-bot", "email": "bot@example.com", "date": P.STAMP}
        return {
            "sha": sha,
            "node_id": f"C_{sha[:8]}",
            "url": self.api(f"/git/commits/{sha}"),
            "html_url": f"{self.repo['html_url']}/commit/{sha}",
            "author": person,
            "committer": person,
            "message": c["message"],
            "tree": {"sha": c["tree"], "url": self.api(f"/git/trees/{c['tree']}")},
            "parents": [
                {"sha": p, "url": self.api(f"/git/commits/{p}"), "html_url": f"{self.repo['html_url']}/commit/{p}"}
                for p in c["parents"]
            ],
            "verification": {
                "verified": False,
                "reason": "unsigned",
                "signature": None,
                "payload": None,
                "verified_at": None,
            },
        }

    def resolve(self, ref_or_sha: str) -> str | None:
        """A branch name or a (full or abbreviated) commit SHA → the commit's SHA; None when unknown."""
        if f"heads/{ref_or_sha}" in self.state.refs:
            return self.state.refs[f"heads/{ref_or_sha}"]
        found = [sha for sha in self.state.commits if len(ref_or_sha) >= 7 and sha.startswith(ref_or_sha.lower())]
        return found[0] if len(found) == 1 else None

    def ancestors(self, sha: str) -> list[str]:
        """`sha` and every commit reachable from it, nearest first (breadth first over the parents)."""
        seen, queue = [sha], [sha]
        while queue:
            for parent in self.state.commits[queue.pop(0)]["parents"]:
                if parent not in seen:
                    seen.append(parent)
                    queue.append(parent)
        return seen

    def merge_base(self, base: str, head: str) -> str | None:
        """The nearest commit reachable from both (git's merge base for the histories the tests build)."""
        reachable = set(self.ancestors(head))
        return next((sha for sha in self.ancestors(base) if sha in reachable), None)

    def rest_commit_obj(self, sha: str) -> dict:
        """A commit as the REST commits and compare endpoints give it (the `commit` schema)."""
        git = self.commit_obj(sha)
        return {
            "url": self.api(f"/commits/{sha}"),
            "sha": sha,
            "node_id": git["node_id"],
            "html_url": git["html_url"],
            "comments_url": self.api(f"/commits/{sha}/comments"),
            "commit": {
                "url": git["url"],
                "author": git["author"],
                "committer": git["committer"],
                "message": git["message"],
                "comment_count": 0,
                "tree": git["tree"],
                "verification": git["verification"],
            },
            "author": None,  # a commit whose email maps to no GitHub account
            "committer": None,
            "parents": git["parents"],
        }

    def tree_obj(self, sha: str) -> dict:
        return {
            "sha": sha,
            "url": self.api(f"/git/trees/{sha}"),
            "truncated": False,
            "tree": [
                {
                    "path": p,
                    "mode": "100644",
                    "type": "blob",
                    "sha": b,
                    "size": len(self.state.blobs[b]),
                    "url": self.api(f"/git/blobs/{b}"),
                }
                for p, b in sorted(self.state.trees[sha].items())
            ],
        }

    def content_obj(self, path: str, ref: str, data: bytes | None) -> dict:
        blob = _git_sha("blob", data) if data is not None else "0" * 40
        url = self.api(f"/contents/{path}?ref={ref}")
        html = f"{self.repo['html_url']}/blob/{ref}/{path}"
        obj = {
            "type": "file" if data is not None else "dir",
            "size": len(data or b""),
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "sha": blob,
            "url": url,
            "git_url": self.api(f"/git/blobs/{blob}"),
            "html_url": html,
            "download_url": None,
            "_links": {"self": url, "git": self.api(f"/git/blobs/{blob}"), "html": html},
        }
        return obj


def _faulted(fault: Fault, status: int, body, headers: dict):
    """The answer an injected "status" or "rate_limit" fault gives instead (other faults leave it)."""
    if fault.kind == "status":
        return fault.status, fault.body or {"message": "Server Error"}, {}
    if fault.kind == "rate_limit":
        body = {
            "message": SECONDARY_RATE_LIMIT,
            "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
        }
        return 403, body, {"Retry-After": str(int(fault.seconds))}
    return status, body, headers


def _spent(command: str, path: str) -> tuple:
    from tests.github.routes import template_of

    body = {
        "message": PRIMARY_RATE_LIMIT,
        "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
    }
    return template_of(command, path), 403, body, {}


def _handler(fake: FakeGitHub):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in two writes: with Nagle's algorithm each answer on a kept-alive
        # connection then waits for the client's delayed ACK (~40 ms a request).
        disable_nagle_algorithm = True

        def log_message(self, *args):  # quiet: pytest shows failures, not access logs
            pass

        def _serve(self) -> None:
            split = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            fake.requests.append((self.command, split.path))
            fault = fake._take_fault(self.command, split.path)
            if fault and fault.kind == "reset":
                self.close_connection = True  # no response at all: the client sees the connection drop
                return
            _before_answer(fake, fault)
            signed = self.headers.get("Authorization", "").split()[-1:] == [fake.token]
            with fake.lock:
                allowed, limits = fake.budget.take() if signed else (True, {})
            if allowed:
                template, status, body, headers = _answer(fake, fault, self.command, split, raw, signed=signed)
            else:  # the budget is spent: turned away before the "backend", no state change
                template, status, body, headers = _spent(self.command, split.path)
            if fault:
                status, body, headers = _faulted(fault, status, body, headers)
            headers = {**limits, **headers}
            data = body if isinstance(body, bytes) else (json.dumps(body).encode() if body is not None else b"")
            if fault and fault.kind == "gate":
                # Answered first, held after: every gated request sees the state it arrived to,
                # whichever of the released clients the scheduler lets act first.
                fault.barrier.wait()
            if template:
                fake.sent.append(Sent(self.command, template, status, data if not isinstance(body, bytes) else b""))
            self.send_response(status)
            ctype = "application/zip" if isinstance(body, bytes) else "application/json; charset=utf-8"
            for key, value in {"Content-Type": ctype, "Content-Length": str(len(data)), **headers}.items():
                self.send_header(key, value)
            self.end_headers()
            if fault and fault.kind == "truncate":  # the connection drops halfway through the body
                self.wfile.write(data[: len(data) // 2])
                self.close_connection = True
                return
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

    return Handler


def _before_answer(fake: FakeGitHub, fault) -> None:
    """A slow fault waits, a hook fault acts on the state, before the request is answered."""
    if fault and fault.kind == "slow":
        time.sleep(fault.seconds)
    if fault and fault.kind == "hook":
        with fake.lock:
            fault.action(fake)


def _answer(fake: FakeGitHub, fault, command: str, split, raw: bytes, *, signed: bool) -> tuple:
    """(template, status, body, headers) as the "backend" answers, before any fault rewrites them."""
    from tests.github.routes import dispatch, template_of

    refused = fault is not None and fault.kind in ("status", "rate_limit") and not fault.after
    if not signed and not split.path.startswith("/_blobs/"):
        return "", 401, {"message": "Bad credentials"}, {}
    if refused:  # turned away before the request reached the "backend": no state change
        return template_of(command, split.path), 0, None, {}
    query = {k: v[-1] for k, v in parse_qs(split.query).items()}
    payload = json.loads(raw) if raw else None
    return dispatch(fake, command, split.path, query, payload)
