"""The fake GitHub's endpoints, each declared with its OpenAPI path template so responses can be validated."""

from __future__ import annotations

import base64
import re
from urllib.parse import quote, unquote

from tests.github import openapi
from tests.github import payloads as P
from tests.github.fake_github import BOT, RUN_NAMES, STAMP_NOW, FakeGitHub, RerunRefused, _git_sha

ROUTES = []


def route(method: str, template: str):
    # `{ref}`, `{path}` and `{basehead}` span slashes (refs/heads/export-bot/obsolete-skips); other parameters do not.
    pattern = re.sub(
        r"\{(\w+)\}",
        lambda m: f"(?P<{m.group(1)}>{'.+' if m.group(1) in ('ref', 'path', 'basehead') else '[^/]+'})",
        template,
    )

    def register(fn):
        ROUTES.append((method, template, re.compile(pattern + "$"), fn))
        return fn

    return register


def not_found(message: str = "Not Found") -> tuple[int, dict]:
    return 404, {"message": message, "documentation_url": "https://docs.github.com/rest"}


def template_of(method: str, path: str) -> str:
    for verb, template, pattern, _ in ROUTES:
        if verb == method and pattern.match(path):
            return template
    return ""


def dispatch(fake: FakeGitHub, method: str, path: str, query: dict, payload):
    if path.startswith("/_blobs/artifacts/"):
        aid = int(path.rsplit("/", 1)[1].split(".")[0])
        return "", 200, fake.state.artifacts[aid]["data"], {}
    for verb, template, pattern, fn in ROUTES:
        match = pattern.match(path)
        if verb == method and match:
            params = match.groupdict()
            owner_repo = f"{params.pop('owner', '')}/{params.pop('repo', '')}"
            if owner_repo != fake.full_name:
                return (template, *not_found(), {})
            with fake.lock:
                result = fn(fake, query=query, body=payload or {}, **params)
            status, body, *headers = result
            return template, status, body, (headers[0] if headers else {})
    return f"{method} {path}", 404, {"message": "Not Found (not implemented by the fake)"}, {}


def _page(fake: FakeGitHub, path: str, items: list, query: dict):
    """GitHub's pagination: `per_page`/`page` in, a `Link` header out that keeps the query's filters."""
    per_page, page = int(query.get("per_page", 30)), int(query.get("page", 1))
    last = max(1, -(-len(items) // per_page))
    headers = {}
    if page < last:
        kept = "".join(
            f"{k}={quote(str(v), safe='')}&" for k, v in sorted(query.items()) if k not in ("page", "per_page")
        )
        link = f"{fake.url}{path}?{kept}per_page={per_page}&page="
        headers["Link"] = f'<{link}{page + 1}>; rel="next", <{link}{last}>; rel="last"'
    return items[(page - 1) * per_page : page * per_page], headers


R = "/repos/{owner}/{repo}"


@route("GET", R + "/issues/{issue_number}/comments")
def list_comments(fake, query, body, issue_number):
    n = int(issue_number)
    if n not in fake.state.issues:
        return not_found()
    items = [fake.comment_obj(cid) for cid, c in sorted(fake.state.comments.items()) if c["issue"] == n]
    page, headers = _page(fake, f"/repos/{fake.full_name}/issues/{n}/comments", items, query)
    return 200, page, headers


@route("POST", R + "/issues/{issue_number}/comments")
def create_comment(fake, query, body, issue_number):
    n = int(issue_number)
    if n not in fake.state.issues:
        return not_found()
    cid = fake.new_id()
    with fake.lock:  # racing POSTs run in two handler threads: `+=` alone can lose one
        fake.created_comments += 1
    fake.state.comments[cid] = {"issue": n, "body": body["body"], "user": BOT, "created": STAMP_NOW()}
    return 201, fake.comment_obj(cid), {"Location": fake.api(f"/issues/comments/{cid}")}


@route("GET", R + "/issues/comments/{comment_id}")
def get_comment(fake, query, body, comment_id):
    cid = int(comment_id)
    if cid not in fake.state.comments:
        return not_found()
    return 200, fake.comment_obj(cid)


@route("PATCH", R + "/issues/comments/{comment_id}")
def edit_comment(fake, query, body, comment_id):
    cid = int(comment_id)
    if cid not in fake.state.comments:
        return not_found()
    fake.state.comments[cid]["body"] = body["body"]
    return 200, fake.comment_obj(cid)


@route("DELETE", R + "/issues/comments/{comment_id}")
def delete_comment(fake, query, body, comment_id):
    if fake.state.comments.pop(int(comment_id), None) is None:
        return not_found()
    return 204, None


@route("POST", R + "/issues/comments/{comment_id}/reactions")
def react(fake, query, body, comment_id):
    cid = int(comment_id)
    if cid not in fake.state.comments:  # deleted since the event named it
        return not_found()
    # One reaction of each kind per user: GitHub answers 200 with the one that exists.
    exists = body["content"] in fake.state.reactions.get(cid, [])
    if not exists:
        fake.state.reactions.setdefault(cid, []).append(body["content"])
    return 200 if exists else 201, {
        "id": fake.new_id(),
        "node_id": "REA_1",
        "user": fake.bot,
        "content": body["content"],
        "created_at": STAMP_NOW(),
    }


@route("GET", R + "/commits/{ref}/status")
def combined_status(fake, query, body, ref):
    # GitHub: the latest status of each context; the combined state is failure if any is error or
    # failure, pending if any is pending (or there is none), success otherwise.
    sha = fake.state.refs.get(ref.removeprefix("refs/"), ref)
    latest = {}
    for status in fake.state.statuses.get(sha, []):
        latest[status["context"]] = status
    states = {s["state"] for s in latest.values()}
    state = (
        "failure" if states & {"error", "failure"} else "pending" if not states or "pending" in states else "success"
    )
    statuses = [
        {k: v for k, v in s.items() if k not in ("creator", "created_at", "updated_at")}
        | {"created_at": s["created_at"], "updated_at": s["updated_at"]}
        for s in latest.values()
    ]
    return 200, {
        "state": state,
        "statuses": statuses,
        "sha": sha,
        "total_count": len(statuses),
        "repository": fake.repo,
        "commit_url": fake.api(f"/commits/{sha}"),
        "url": fake.api(f"/commits/{sha}/status"),
    }


@route("POST", R + "/statuses/{sha}")
def create_status(fake, query, body, sha):
    sid = fake.new_id()
    status = {
        "url": fake.api(f"/statuses/{sha}"),
        "avatar_url": None,
        "id": sid,
        "node_id": f"S_{sid}",
        "state": body["state"],
        "description": body.get("description"),
        "target_url": body.get("target_url"),
        "context": body.get("context", "default"),
        "created_at": STAMP_NOW(),
        "updated_at": STAMP_NOW(),
        "creator": fake.bot,
    }
    fake.state.statuses.setdefault(sha, []).append(status)
    return 201, status


# GitHub: at most 50 annotations per request, each on a line of a path; an update appends its
# annotations to the run's, and `output.annotations_count` counts them all.
_ANNOTATION_KEYS = {"path", "start_line", "end_line", "annotation_level", "message"}


def _check_output(fake, run: dict, output: dict | None) -> tuple[int, dict] | None:
    if output is None:
        return None
    batch = output.get("annotations") or []
    if len(batch) > 50 or any(not _ANNOTATION_KEYS <= set(a) for a in batch):
        return 422, {"message": "Validation Failed: at most 50 annotations, each with path, lines, level and message"}
    if output.get("summary") is not None and len(output["summary"]) > 65535:
        return 422, {"message": "Validation Failed: output.summary is longer than 65535 characters"}
    run["annotations"] = run.get("annotations", []) + list(batch)
    run["output"] = {
        "title": output.get("title"),
        "summary": output.get("summary"),
        "text": output.get("text"),
        "annotations_count": len(run["annotations"]),
        "annotations_url": fake.api(f"/check-runs/{run['id']}/annotations"),
    }
    return None


def _check_run_json(fake, run: dict) -> dict:
    return {k: v for k, v in run.items() if k != "annotations"}


@route("POST", R + "/check-runs")
def create_check_run(fake, query, body, **_):
    rid = fake.new_id()
    run = {
        "id": rid,
        "node_id": f"CR_{rid}",
        "head_sha": body["head_sha"],
        "name": body["name"],
        "url": fake.api(f"/check-runs/{rid}"),
        "html_url": f"{fake.repo['html_url']}/runs/{rid}",
        "details_url": body.get("details_url"),
        "status": body.get("status", "queued"),
        "conclusion": body.get("conclusion"),
        "started_at": STAMP_NOW(),
        "completed_at": STAMP_NOW() if body.get("conclusion") else None,
        "external_id": body.get("external_id", ""),
        "check_suite": {"id": rid + 1},
        "app": None,
        "pull_requests": [],
        "output": {"title": None, "summary": None, "text": None, "annotations_count": 0,
                   "annotations_url": fake.api(f"/check-runs/{rid}/annotations")},
    }  # fmt: skip
    refused = _check_output(fake, run, body.get("output"))
    if refused:
        return refused
    fake.state.check_runs[rid] = run
    return 201, _check_run_json(fake, run)


@route("PATCH", R + "/check-runs/{check_run_id}")
def update_check_run(fake, query, body, check_run_id):
    run = fake.state.check_runs.get(int(check_run_id))
    if run is None:
        return not_found()
    for key in ("name", "details_url", "status", "conclusion", "external_id"):
        if key in body:
            run[key] = body[key]
    refused = _check_output(fake, run, body.get("output"))
    return refused or (200, _check_run_json(fake, run))


@route("GET", R + "/collaborators/{username}/permission")
def permission(fake, query, body, username):
    perm = fake.state.permissions.get(username, "read")
    # GitHub's legacy field folds maintain into write and triage into read; a custom role
    # (`name:base`) shows its name as the role and its base in the legacy field.
    perm, _, base = perm.partition(":")
    shown = base or {"maintain": "write", "triage": "read"}.get(perm, perm)
    user = dict(fake.user_obj(username), role_name=perm)
    return 200, {"permission": shown, "role_name": perm, "user": user}


@route("GET", R + "/pulls/{pull_number}")
def get_pull(fake, query, body, pull_number):
    n = int(pull_number)
    return (200, fake.pull_obj(n)) if n in fake.state.pulls else not_found()


@route("GET", R + "/pulls/{pull_number}/files")
def pull_files(fake, query, body, pull_number):
    pr = fake.state.pulls[int(pull_number)]
    base, head = fake.files_at("main"), fake.files_at(fake.pull_head_sha(pr))
    items = [
        {
            "sha": _git_sha("blob", head.get(p, "").encode()),
            "filename": p,
            "status": "modified" if p in base else "added",
            "additions": 1,
            "deletions": 0,
            "changes": 1,
            "blob_url": f"{fake.repo['html_url']}/blob/x/{p}",
            "raw_url": f"{fake.repo['html_url']}/raw/x/{p}",
            "contents_url": fake.api(f"/contents/{p}"),
        }
        for p in sorted(head)
        if base.get(p) != head[p]
    ]
    return 200, items


@route("GET", R + "/pulls")
def list_pulls(fake, query, body):
    items = []
    for n, pr in sorted(fake.state.pulls.items()):
        owner = pr["fork"].split("/")[0] if pr["fork"] else fake.full_name.split("/")[0]
        if query.get("state", "open") not in ("all", pr["state"]):
            continue
        if "head" in query and query["head"] != f"{owner}:{pr['head_ref']}":
            continue
        if "base" in query and query["base"] != pr["base_ref"]:
            continue
        items.append(fake.pull_obj(n))
    if query.get("direction", "desc" if query.get("sort") == "created" else "asc") == "desc":
        items.reverse()  # numbers grow with creation time here
    page, headers = _page(fake, f"/repos/{fake.full_name}/pulls", items, query)
    return 200, [_simple_pull(p) for p in page], headers


def _simple_pull(obj: dict) -> dict:
    # The list endpoint returns `pull-request-simple`: no merge/diff statistics.
    for key in (
        "merged",
        "mergeable",
        "rebaseable",
        "mergeable_state",
        "merged_by",
        "comments",
        "review_comments",
        "maintainer_can_modify",
        "commits",
        "additions",
        "deletions",
        "changed_files",
    ):
        obj.pop(key, None)
    return obj


@route("POST", R + "/pulls")
def create_pull(fake, query, body):
    owner = fake.full_name.split("/")[0]
    if any(
        p["head_ref"] == body["head"] and p["base_ref"] == body["base"] and p["state"] == "open" and not p["fork"]
        for p in fake.state.pulls.values()
    ):
        # GitHub's own words: the reason is in `errors[].message`, the top message says only this.
        return 422, {
            "message": "Validation Failed",
            "errors": [
                {
                    "resource": "PullRequest",
                    "code": "custom",
                    "message": f"A pull request already exists for {owner}:{body['head']}.",
                }
            ],
            "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
            "status": "422",
        }
    if f"heads/{body['head']}" not in fake.state.refs:
        return 422, {
            "message": "Validation Failed",
            "errors": [{"resource": "PullRequest", "field": "head", "code": "invalid"}],
            "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
            "status": "422",
        }
    if fake.state.refs[f"heads/{body['head']}"] == fake.state.refs[f"heads/{body['base']}"]:
        return 422, {
            "message": "Validation Failed",
            "errors": [
                {
                    "resource": "PullRequest",
                    "code": "custom",
                    "message": f"No commits between {body['base']} and {body['head']}",
                }
            ],
            "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
            "status": "422",
        }
    if fake.pull_creation_forbidden:
        return 403, {
            "message": "GitHub Actions is not permitted to create or approve pull requests.",
            "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
            "status": "403",
        }
    n = max([0, *fake.state.issues]) + 1
    fake.open_pull(n, body["head"], title=body["title"], user=BOT)
    fake.state.pulls[n].update(body=body.get("body") or "", draft=bool(body.get("draft")))
    fake.gated_run(body["head"])  # a PR the workflow's token opens: its run awaits approval
    return 201, fake.pull_obj(n)


@route("POST", R + "/pulls/{pull_number}/requested_reviewers")
def request_reviewers(fake, query, body, pull_number):
    pr = fake.state.pulls.get(int(pull_number))
    if pr is None:
        return not_found()
    users, teams = body.get("reviewers") or [], body.get("team_reviewers") or []
    if pr["user"] in users:
        # GitHub's words when a PR's author is asked to review it.
        return 422, {
            "message": "Review cannot be requested from pull request author.",
            "documentation_url": "https://docs.github.com/rest/pulls/review-requests#request-reviewers-for-a-pull-request",
            "status": "422",
        }
    for key, names in (("requested_reviewers", users), ("requested_teams", teams)):
        pr.setdefault(key, [])
        pr[key] += [name for name in names if name not in pr[key]]
    return 201, fake.pull_obj(int(pull_number))


@route("PATCH", R + "/pulls/{pull_number}")
def edit_pull(fake, query, body, pull_number):
    pr = fake.state.pulls[int(pull_number)]
    for key in ("title", "body", "state"):
        if key in body:
            pr[key] = body[key]
    return 200, fake.pull_obj(int(pull_number))


@route("GET", R + "/actions/workflows/{workflow_id}/runs")
def list_runs(fake, query, body, workflow_id):
    for run in fake.state.runs:
        run["hidden_for"] = max(0, run["hidden_for"] - 1)
    runs = [r for r in reversed(fake.state.runs) if r["workflow"] == workflow_id and not r["hidden_for"]]
    for key, field in (("branch", "branch"), ("head_sha", "head_sha"), ("event", "event")):
        if key in query:
            runs = [r for r in runs if r[field] == query[key]]
    # `status` takes a state (queued, in_progress, completed, waiting on an environment, …) or a
    # conclusion (success, failure, action_required for a run awaiting approval, …).
    if query.get("status") in ("queued", "in_progress", "completed", "waiting", "requested", "pending"):
        runs = [r for r in runs if r["status"] == query["status"]]
    elif "status" in query:
        runs = [r for r in runs if r["conclusion"] == query["status"]]
    if query.get("created", "").startswith(">="):
        runs = [r for r in runs if r["created"] >= query["created"][2:]]
    page, headers = _page(fake, f"/repos/{fake.full_name}/actions/workflows/{workflow_id}/runs", runs, query)
    return 200, {"total_count": len(runs), "workflow_runs": [fake.run_obj(r) for r in page]}, headers


@route("POST", R + "/actions/workflows/{workflow_id}/dispatches")
def create_dispatch(fake, query, body, workflow_id):
    fake.state.dispatches.append({"workflow": workflow_id, **body})
    inputs = body.get("inputs") or {}
    title = RUN_NAMES[workflow_id](inputs) if workflow_id in RUN_NAMES else workflow_id
    run_id = fake.add_run(
        workflow_id,
        head_sha=fake.state.refs[f"heads/{body['ref']}"],
        branch=body["ref"],
        event="workflow_dispatch",
        status="queued",
        title=title,
    )
    fake.state.runs[-1]["hidden_for"] = fake.run_list_lag
    if body.get("return_run_details"):
        return 200, {
            "workflow_run_id": run_id,
            "run_url": fake.api(f"/actions/runs/{run_id}"),
            "html_url": f"{fake.repo['html_url']}/actions/runs/{run_id}",
        }
    return 204, None


@route("GET", R + "/actions/runs/{run_id}/artifacts")
def run_artifacts(fake, query, body, run_id):
    ids = [aid for aid, a in sorted(fake.state.artifacts.items()) if a["run"] == int(run_id)]
    return 200, {"total_count": len(ids), "artifacts": [fake.artifact_obj(a) for a in ids]}


@route("GET", R + "/actions/artifacts")
def list_artifacts(fake, query, body):
    """The repository's artifacts, newest first; `name` filters by exact name (GitHub's `?name=`)."""
    ids = [aid for aid in sorted(fake.state.artifacts, reverse=True)]
    if "name" in query:
        ids = [aid for aid in ids if fake.state.artifacts[aid]["name"] == query["name"]]
    page, headers = _page(
        fake, f"/repos/{fake.full_name}/actions/artifacts", [fake.artifact_obj(a) for a in ids], query
    )
    return 200, {"total_count": len(ids), "artifacts": page}, headers


@route("GET", R + "/actions/artifacts/{artifact_id}/{archive_format}")
def download_artifact(fake, query, body, artifact_id, archive_format):
    aid = int(artifact_id)
    if aid not in fake.state.artifacts or archive_format != "zip":
        return not_found()
    if fake.state.artifacts[aid]["expired"]:  # expired since it was listed
        return 410, {"message": "Artifact has expired", "documentation_url": "https://docs.github.com/rest"}
    # GitHub answers with a redirect to short-lived blob storage.
    return 302, None, {"Location": f"{fake.url}/_blobs/artifacts/{aid}.zip"}


@route("GET", R + "/git/ref/{ref}")
def get_ref(fake, query, body, ref):
    return (200, fake.ref_obj(ref)) if ref in fake.state.refs else not_found()


@route("POST", R + "/git/refs")
def create_ref(fake, query, body):
    ref = body["ref"].removeprefix("refs/")
    if ref in fake.state.refs:
        return 422, {
            "message": "Reference already exists",
            "documentation_url": "https://docs.github.com/rest/git/refs#create-a-reference",
            "status": "422",
        }
    fake.state.refs[ref] = body["sha"]
    return 201, fake.ref_obj(ref)


@route("PATCH", R + "/git/refs/{ref}")
def update_ref(fake, query, body, ref):
    if ref not in fake.state.refs:
        return 422, {"message": "Reference does not exist", "documentation_url": "https://docs.github.com/rest"}
    if not body.get("force") and not _descends(fake, body["sha"], fake.state.refs[ref]):
        return 422, {"message": "Update is not a fast forward", "documentation_url": "https://docs.github.com/rest"}
    fake.state.refs[ref] = body["sha"]
    if ref.startswith("heads/"):  # every write here is the workflow's token's: a bot push
        fake.gated_run(ref.removeprefix("heads/"))
    return 200, fake.ref_obj(ref)


def _descends(fake, sha: str, ancestor: str) -> bool:
    todo = [sha]
    while todo:
        current = todo.pop()
        if current == ancestor:
            return True
        todo += fake.state.commits.get(current, {}).get("parents", [])
    return False


@route("DELETE", R + "/git/refs/{ref}")
def delete_ref(fake, query, body, ref):
    if fake.state.refs.pop(ref, None) is None:
        return 422, None  # the description documents no body for this 422
    return 204, None


@route("GET", R + "/git/commits/{commit_sha}")
def get_commit(fake, query, body, commit_sha):
    return (200, fake.commit_obj(commit_sha)) if commit_sha in fake.state.commits else not_found()


@route("POST", R + "/git/blobs")
def create_blob(fake, query, body):
    data = body["content"].encode() if body.get("encoding", "utf-8") == "utf-8" else base64.b64decode(body["content"])
    sha = _git_sha("blob", data)
    fake.state.blobs[sha] = data
    return 201, {"url": fake.api(f"/git/blobs/{sha}"), "sha": sha}


@route("POST", R + "/git/trees")
def create_tree(fake, query, body):
    tree = dict(fake.state.trees.get(body.get("base_tree"), {}))
    for item in body["tree"]:
        tree[item["path"]] = item["sha"]
    return 201, fake.tree_obj(fake._store_tree(tree))


@route("POST", R + "/git/commits")
def create_commit(fake, query, body):
    return 201, fake.commit_obj(fake._store_commit(body["tree"], list(body["parents"]), body["message"]))


@route("GET", R + "/contents/{path}")
def get_contents(fake, query, body, path):
    ref = query.get("ref", "main")
    files = fake.files_at(ref)
    if path in files:
        obj = fake.content_obj(path, ref, files[path].encode())
        return 200, dict(obj, content=base64.b64encode(files[path].encode()).decode(), encoding="base64")
    inside = sorted(p for p in files if p.startswith(path.rstrip("/") + "/") and "/" not in p[len(path) + 1 :])
    if not inside:
        return not_found()
    return 200, [fake.content_obj(p, ref, files[p].encode()) for p in inside]


@route("GET", R + "/actions/runs/{run_id}")
def get_run(fake, query, body, run_id):
    run = next((r for r in fake.state.runs if r["id"] == int(run_id)), None)
    return (200, fake.run_obj(run)) if run else not_found()


@route("GET", R + "/actions/runs/{run_id}/attempts/{attempt_number}")
def get_run_attempt(fake, query, body, run_id, attempt_number):
    run = next((r for r in fake.state.runs if r["id"] == int(run_id)), None)
    if run is None or not 1 <= int(attempt_number) <= run.get("attempt", 1):
        return not_found()
    return 200, fake.run_obj(run, int(attempt_number))


@route("POST", R + "/actions/runs/{run_id}/rerun")
def rerun(fake, query, body, run_id):
    if not any(r["id"] == int(run_id) for r in fake.state.runs):
        return not_found()
    try:
        fake.rerun(int(run_id))
    except RerunRefused:
        return 403, {
            "message": "This workflow run cannot be rerun",
            "documentation_url": "https://docs.github.com/rest",
        }
    return 201, {}


@route("POST", R + "/actions/runs/{run_id}/approve")
def approve(fake, query, body, run_id):
    run = next((r for r in fake.state.runs if r["id"] == int(run_id)), None)
    if run is None:
        return not_found()
    if run["conclusion"] != "action_required":  # this endpoint approves a fork's run only
        return 403, {
            "message": "This run is not waiting for approval",
            "documentation_url": "https://docs.github.com/rest",
        }
    fake.approve(run["id"])
    return 201, {}


@route("GET", R + "/pages")
def get_pages(fake, query, body):
    if fake.pages is None:
        return not_found()
    source = {"source": {"branch": "gh-pages", "path": "/"}} if fake.pages == "legacy" else {}
    return 200, {
        **source,
        "url": fake.api("/pages"),
        "status": "built",
        "cname": None,
        "custom_404": False,
        "public": True,
        "build_type": fake.pages,
        "html_url": f"https://{fake.full_name.split('/')[0].lower()}.github.io/{fake.full_name.split('/')[1]}/",
    }


@route("GET", R + "/actions/caches")
def list_caches(fake, query, body):
    """The repository's caches, newest first; `ref` filters by ref, `key` by key or key prefix."""
    entries = [
        (i, e)
        for i, e in reversed(list(enumerate(fake.caches.entries)))
        if query.get("ref", e["ref"]) == e["ref"] and e["key"].startswith(query.get("key", ""))
    ]
    items = [
        {
            "id": i + 1,
            "ref": e["ref"],
            "key": e["key"],
            "version": _git_sha("blob", e["key"].encode()),
            "last_accessed_at": P.STAMP,
            "created_at": P.STAMP,
            "size_in_bytes": len(e["data"]),
        }
        for i, e in entries
    ]
    page, headers = _page(fake, f"/repos/{fake.full_name}/actions/caches", items, query)
    return 200, {"total_count": len(items), "actions_caches": page}, headers


@route("GET", R + "/commits/{commit_sha}/branches-where-head")
def branches_where_head(fake, query, body, commit_sha):
    names = sorted(ref.removeprefix("heads/") for ref, sha in fake.state.refs.items() if sha == commit_sha)
    if commit_sha not in fake.state.commits and not names:
        return 422, {"message": "No commit found for SHA", "documentation_url": "https://docs.github.com/rest"}
    return 200, [
        {"name": n, "commit": {"sha": commit_sha, "url": fake.api(f"/commits/{commit_sha}")}, "protected": False}
        for n in names
    ]


# --- issues, and the pull requests of a commit (the tracking issue of main's regressions) ------


def add_issue(fake, title: str, body: str, *, user: str = BOT, state: str = "open", labels=()) -> int:
    """An issue someone opened (a user quoting the bot's marker, or the bot itself earlier): its number."""
    number = max([0, *fake.state.issues]) + 1  # issues and PRs share one sequence of numbers
    fake.state.issues[number] = {
        "pull": None,
        "title": title,
        "body": body,
        "state": state,
        "state_reason": "completed" if state == "closed" else None,
        "user": user,
        "labels": list(labels),
        "created": STAMP_NOW(),
    }
    return number


def associate(fake, sha: str, number: int) -> None:
    """GitHub associates PR `number` with commit `sha` (the PR that merged it into main)."""
    fake.state.commit_pulls.setdefault(sha, []).append(number)


def issue_obj(fake, number: int) -> dict:
    data = fake.state.issues[number]
    pull = fake.state.pulls.get(data["pull"]) if data.get("pull") else None
    obj = P.example("issues", "opened")["issue"]
    fields = pull if pull is not None else data
    closed = fields["state"] == "closed"
    obj.update(
        id=number + 2 * 10**6,
        node_id=f"I_{number}",
        number=number,
        title=fields["title"],
        body=fields["body"],
        state=fields["state"],
        state_reason=None if pull is not None else data["state_reason"],
        user=fake.user_obj(fields["user"]),
        labels=[_label(fake, name) for name in data.get("labels", ())],
        url=fake.api(f"/issues/{number}"),
        repository_url=fake.repo["url"],
        labels_url=fake.api(f"/issues/{number}/labels{{/name}}"),
        comments_url=fake.api(f"/issues/{number}/comments"),
        events_url=fake.api(f"/issues/{number}/events"),
        html_url=f"{fake.repo['html_url']}/{'pull' if pull is not None else 'issues'}/{number}",
        comments=sum(1 for c in fake.state.comments.values() if c["issue"] == number),
        created_at=fields["created"],
        updated_at=fields["created"],
        closed_at=P.STAMP if closed else None,
        author_association="MEMBER",
        assignee=None,
        assignees=[],
        milestone=None,
    )
    obj.pop("reactions", None)
    obj.pop("draft", None)
    if pull is not None:
        # GitHub's issues API lists pull requests too, each with this key.
        obj["pull_request"] = {
            "url": fake.api(f"/pulls/{number}"),
            "html_url": f"{fake.repo['html_url']}/pull/{number}",
            "diff_url": f"{fake.repo['html_url']}/pull/{number}.diff",
            "patch_url": f"{fake.repo['html_url']}/pull/{number}.patch",
            "merged_at": P.STAMP if pull["merged"] else None,
        }
    return obj


def _label(fake, name: str) -> dict:
    return {
        "id": sum(map(ord, name)),
        "node_id": f"L_{name}",
        "url": fake.api(f"/labels/{name}"),
        "name": name,
        "description": None,
        "color": "ededed",
        "default": False,
    }


def _issue_listed(fake, number: int, query: dict) -> bool:
    data = fake.state.issues[number]
    pull = fake.state.pulls.get(data["pull"]) if data.get("pull") else None
    fields = pull if pull is not None else data
    if query.get("state", "open") not in ("all", fields["state"]):
        return False
    if "creator" in query and query["creator"] != fields["user"]:
        return False
    wanted = [w for w in query.get("labels", "").split(",") if w]
    return all(w in data.get("labels", ()) for w in wanted)


@route("GET", R + "/issues")
def list_issues(fake, query, body):
    numbers = [n for n in sorted(fake.state.issues) if _issue_listed(fake, n, query)]
    if query.get("direction", "desc") == "desc":
        numbers.reverse()  # numbers grow with creation time here
    per_page, page = int(query.get("per_page", 30)), int(query.get("page", 1))
    last = max(1, -(-len(numbers) // per_page))
    headers = {}
    if page < last:
        # The next page keeps the filters: GitHub's Link header carries the whole query.
        kept = "".join(f"{k}={v}&" for k, v in sorted(query.items()) if k not in ("page", "per_page"))
        link = f"{fake.url}/repos/{fake.full_name}/issues?{kept}per_page={per_page}&page="
        headers["Link"] = f'<{link}{page + 1}>; rel="next", <{link}{last}>; rel="last"'
    shown = numbers[(page - 1) * per_page : page * per_page]
    return 200, [issue_obj(fake, n) for n in shown], headers


@route("POST", R + "/issues")
def create_issue(fake, query, body):
    if not isinstance(body.get("title"), str) or not body["title"]:
        return 422, {
            "message": "Validation Failed",
            "errors": [{"resource": "Issue", "field": "title", "code": "missing_field"}],
        }
    number = add_issue(fake, body["title"], body.get("body") or "", labels=body.get("labels") or ())
    return 201, issue_obj(fake, number), {"Location": fake.api(f"/issues/{number}")}


@route("POST", R + "/issues/{issue_number}/labels")
def add_labels(fake, query, body, issue_number):
    n = int(issue_number)
    if n not in fake.state.issues:
        return not_found()
    # A pull request's labels are its issue's; GitHub creates a label the repository lacks.
    names = body.get("labels") if isinstance(body, dict) else body
    labels = fake.state.issues[n].setdefault("labels", [])
    labels += [name for name in names or () if name not in labels]
    return 200, [_label(fake, name) for name in labels]


@route("GET", R + "/issues/{issue_number}")
def get_issue(fake, query, body, issue_number):
    n = int(issue_number)
    return (200, issue_obj(fake, n)) if n in fake.state.issues else not_found()


@route("PATCH", R + "/issues/{issue_number}")
def edit_issue(fake, query, body, issue_number):
    n = int(issue_number)
    if n not in fake.state.issues:
        return not_found()
    data = fake.state.issues[n]
    target = fake.state.pulls[data["pull"]] if data.get("pull") else data
    reason = body.get("state_reason")
    if body.get("state") not in (None, "open", "closed") or reason not in (
        None,
        "completed",
        "not_planned",
        "reopened",
    ):
        return 422, {
            "message": "Validation Failed",
            "errors": [{"resource": "Issue", "field": "state", "code": "invalid"}],
        }
    for key in ("title", "body", "state"):
        if key in body:
            target[key] = body[key]
    if not data.get("pull"):
        if "state" in body:
            data["state_reason"] = reason or ("completed" if body["state"] == "closed" else "reopened")
        elif reason:
            data["state_reason"] = reason
    return 200, issue_obj(fake, n)


@route("GET", R + "/commits/{commit_sha}/pulls")
def commit_pulls(fake, query, body, commit_sha):
    if commit_sha not in fake.state.commits and commit_sha not in fake.state.commit_pulls:
        return 422, {
            "message": f"No commit found for SHA: {commit_sha}",
            "documentation_url": "https://docs.github.com/rest",
        }
    # The PRs seeded for the commit (the one that merged it), then the open PRs whose head it is, a
    # fork PR's included: "List pull requests associated with a commit" lists open PRs for a commit
    # that is not on the default branch.
    numbers = list(fake.state.commit_pulls.get(commit_sha, []))
    numbers += [
        n
        for n, pr in sorted(fake.state.pulls.items())
        if pr["state"] == "open" and fake.pull_head_sha(pr) == commit_sha and n not in numbers
    ]
    items = [_simple_pull(fake.pull_obj(n)) for n in numbers]
    page, headers = _page(fake, f"/repos/{fake.full_name}/commits/{commit_sha}/pulls", items, query)
    return 200, page, headers


@route("GET", R + "/compare/{basehead}")
def compare(fake, query, body, basehead):
    # GitHub: `BASE...HEAD`, each a branch or a commit; 404 when either is unknown or they share no history.
    base_ref, sep, head_ref = unquote(basehead).partition("...")
    base, head = fake.resolve(base_ref), fake.resolve(head_ref)
    if not sep or base is None or head is None:
        return not_found()
    merge_base = fake.merge_base(base, head)
    if merge_base is None:
        return not_found(f"No common ancestor between {base_ref} and {head_ref}.")
    from_base, from_head = set(fake.ancestors(base)), fake.ancestors(head)
    ahead = [sha for sha in reversed(from_head) if sha not in from_base]  # oldest first, as GitHub lists them
    behind = len(from_base - set(from_head))
    status = (
        "identical" if not ahead and not behind else "ahead" if not behind else "behind" if not ahead else "diverged"
    )
    html = fake.repo["html_url"]
    return 200, {
        "url": fake.api(f"/compare/{basehead}"),
        "html_url": f"{html}/compare/{basehead}",
        "permalink_url": f"{html}/compare/{base[:7]}...{head[:7]}",
        "diff_url": f"{html}/compare/{basehead}.diff",
        "patch_url": f"{html}/compare/{basehead}.patch",
        "base_commit": fake.rest_commit_obj(base),
        "merge_base_commit": fake.rest_commit_obj(merge_base),
        "status": status,
        "ahead_by": len(ahead),
        "behind_by": behind,
        "total_commits": len(ahead),
        "commits": [fake.rest_commit_obj(sha) for sha in ahead[:250]],
        "files": [],
    }


@route("GET", R + "/commits/{ref}")
def get_repo_commit(fake, query, body, ref):
    """A commit as the REST API shows it: its GitHub author is null when no account matches its email.

    Registered last: `{ref}` spans slashes, so `/commits/{sha}/pulls` and `/status` must match first.
    """
    if ref not in fake.state.commit_authors:
        docs = "https://docs.github.com/rest/commits/commits#get-a-commit"
        return 422, {"message": f"No commit found for SHA: {ref}", "documentation_url": docs}
    obj = openapi.example("commit")
    login = fake.state.commit_authors[ref]
    obj.update(
        sha=ref,
        url=fake.api(f"/commits/{ref}"),
        html_url=f"{fake.repo['html_url']}/commit/{ref}",
        comments_url=fake.api(f"/commits/{ref}/comments"),
        author=fake.user_obj(login) if login else None,
        committer=fake.user_obj("web-flow"),
        parents=[],
        files=[],  # the description's own example lists files its schema would refuse
    )
    return 200, obj
