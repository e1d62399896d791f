"""A small GitHub Actions step runner: the caller workflows and the reusable workflows run as written.

nektos/act would be the usual tool, but it needs Docker or a recent Go toolchain and these
machines have neither. This runner executes every `run:` step with bash and the step's `env:`,
evaluates the `${{ }}` expressions the workflows use (tests/rehearsal/expressions.py), calls
`huggingface/export-bot/.github/workflows/*.yml@SHA` from this checkout's .github/workflows, and
stands in only for actions/checkout, actions/setup-python and the artifact upload/download
actions. Any other `uses:` and any expression it does not know fail the rehearsal loudly.

Two liberties: jobs that install torch share one Python environment (a runner machine's
warm tool cache); their install steps still run, in order, each time. Every other job gets a
fresh virtual environment, so the publishing jobs prove the light install (a rehearsal that has
proved it elsewhere may share one light environment the same way, `share_light`). And a reusable
workflow's input may be swapped for a local stand-in (`substitute`): the PyTorch CPU index is
out of reach here, so the rehearsal names a local index holding the same wheel, and records
that the workflow asked for the CPU index.
"""

from __future__ import annotations

import fnmatch
import io
import itertools
import json
import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.rehearsal.expressions import Evaluator, ExpressionError

ROOT = Path(__file__).resolve().parents[2]
BOT_REPOSITORY = "huggingface/export-bot"
PYTHONS = {"3.11": "3.11"}  # setup-python's python-version → the interpreter found on PATH
CHECKOUT = "actions/checkout@"
SETUP_PYTHON = "actions/setup-python@"
UPLOAD = "actions/upload-artifact@"
DOWNLOAD = "actions/download-artifact@"
# GitHub Pages: the upload stands in as the run's `github-pages` artifact, the deployment as a check
# that this artifact holds a site (GitHub serves it; the browser test in tests/site looks at it).
UPLOAD_PAGES = "actions/upload-pages-artifact@"
DEPLOY_PAGES = "actions/deploy-pages@"


class WorkflowError(AssertionError):
    """The workflow uses something the step runner does not stand in for, or a step failed unexpectedly."""


def load_workflow(path: Path) -> dict:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the bare key `on` as True
    return data


@dataclass
class JobResult:
    name: str
    result: str  # success, failure, skipped
    outputs: dict[str, str] = field(default_factory=dict)
    logs: list[str] = field(default_factory=list)
    summary: str = ""
    python: Path | None = None  # the job's interpreter, to inspect what it installed
    commands: list[tuple[str, dict[str, str]]] = field(default_factory=list)  # each run: line and its step env
    requests: list[tuple[str, str]] = field(default_factory=list)  # (method, path): what the job asked GitHub's API
    runs_on: Any = None  # the runner labels `runs-on` gave, as GitHub reads them


@dataclass
class WorkflowRun:
    """One run of a caller workflow: its id in the fake GitHub, its jobs and its artifacts."""

    workflow: str
    run_id: int
    jobs: dict[str, JobResult] = field(default_factory=dict)
    artifacts: dict[str, Path] = field(default_factory=dict)  # name → folder
    title: str = ""  # the rendered run-name (GitHub's display_title)

    @property
    def conclusion(self) -> str:
        results = {job.result for job in self.jobs.values()}
        return "failure" if "failure" in results else "success"


class Runner:
    """Runs the target repository's caller workflows against `fake` (tests/github/fake_github.py)."""

    def __init__(
        self,
        *,
        origin: Path,
        fake,
        work: Path,
        runner_python: Path | None = None,
        substitute: dict[str, tuple[str, str]] | None = None,
        share_light: bool = False,
    ):
        self.origin = origin  # the target repository as GitHub has it (a git repository)
        self.fake = fake
        self.work = work
        self.runner_python = runner_python  # the shared environment of torch-installing jobs
        # input name → (the value the workflow must be given, the local stand-in used instead)
        self.substitute = substitute or {}
        self.substituted: list[tuple[str, str, str]] = []  # (job, input, the value the workflow gave)
        self.share_light = share_light
        self.light_python: Path | None = None  # the light jobs' shared environment, with share_light
        self.runs: dict[int, WorkflowRun] = {}
        self.cancelled: list[int] = []  # runs GitHub's concurrency groups cancelled (tests/github/fake_github.py)
        self._count = itertools.count(1)

    # --- workflows ----------------------------------------------------------------------------
    def run(
        self, workflow: str, *, event_name: str, event: dict, sha: str, ref: str = "refs/heads/main", changed=None
    ) -> WorkflowRun | None:
        """Run `.github/workflows/<workflow>` of the target repository for this event (None: its paths filter)."""
        data = load_workflow(self.origin / ".github" / "workflows" / workflow)
        if event_name not in data["on"]:
            raise WorkflowError(f"{workflow} does not run on {event_name}")
        trigger = data["on"][event_name] or {}
        if changed is not None and "paths" in trigger and not any(_matches(p, trigger["paths"]) for p in changed):
            return None  # GitHub starts no run: no changed file matches the trigger's paths
        if isinstance(trigger, dict) and "types" in trigger and event.get("action") not in trigger["types"]:
            return None  # nor for an activity type the trigger does not list
        branch = ref.rsplit("/", 1)[-1]
        run_id = self.fake.add_run(workflow, head_sha=sha, branch=branch, conclusion="in_progress", event=event_name)
        run = WorkflowRun(workflow, run_id)
        self.runs[run_id] = run
        github = {
            "event_name": event_name,
            "event": event,
            "sha": sha,
            "ref": ref,
            "ref_name": ref.removeprefix("refs/heads/").removeprefix("refs/tags/"),
            "repository": self.fake.full_name,
            "token": self.fake.token,
            "server_url": "https://github.com",
            "run_id": str(run_id),
            "run_attempt": "1",  # every run here is a first attempt (a string, as GitHub's context gives it)
            "workflow": data.get("name", workflow),
        }
        inputs = dict(event.get("inputs") or {}) if event_name == "workflow_dispatch" else {}
        for name, spec in (data["on"].get("workflow_dispatch") or {}).get("inputs", {}).items():
            if event_name == "workflow_dispatch":
                inputs.setdefault(name, spec.get("default", ""))
        run.title = _string(
            Evaluator({"github": github, "inputs": inputs}).render(data.get("run-name", ""))
        ) or data.get("name", workflow)
        # The workflow's concurrency group, as GitHub keys it: a run that waits is not run here.
        concurrency = data.get("concurrency") or {}
        group = _string(Evaluator({"github": github, "inputs": inputs}).render(concurrency.get("group", "")))
        cancel = bool(concurrency.get("cancel-in-progress"))
        self.cancelled += self.fake.arrive(run_id, group or None, cancel_in_progress=cancel)
        self._jobs(data, run, github, inputs, prefix="")
        self.fake.finish_run(run_id, run.conclusion)
        return run

    def _jobs(
        self, data: dict, run: WorkflowRun, github: dict, inputs: dict, prefix: str, secrets: dict | None = None
    ) -> dict[str, JobResult]:
        results: dict[str, JobResult] = {}
        pending = dict(data["jobs"])
        while pending:
            ready = [n for n, j in pending.items() if all(d in results for d in _needs(j))]
            if not ready:
                raise WorkflowError(f"{run.workflow}: jobs wait on each other: {sorted(pending)}")
            for name in ready:
                job = pending.pop(name)
                needs = {d: {"result": results[d].result, "outputs": results[d].outputs} for d in _needs(job)}
                results[name] = self._job(prefix + name, job, data, run, github, inputs, needs, secrets or {})
        return results

    def _job(self, name, job, data, run, github, inputs, needs, secrets) -> JobResult:
        def status(kind: str) -> bool:
            states = {n["result"] for n in needs.values()}
            if kind == "success":
                return states <= {"success"}
            if kind == "failure":
                return "failure" in states
            return kind == "always"

        # The repository's secrets: none here; a called workflow gets what its caller passes.
        contexts = {"github": github, "inputs": inputs, "needs": needs, "secrets": secrets}
        evaluator = Evaluator(contexts, status)
        if not evaluator.condition(job.get("if")):
            result = run.jobs[name] = JobResult(name, "skipped")
            return result
        if "uses" in job:
            return self._call(name, job, run, github, evaluator, needs)
        combos = [{}]
        if "strategy" in job:
            matrix = evaluator.render(job["strategy"]["matrix"])
            if not isinstance(matrix, dict):
                raise WorkflowError(f"job {name}: matrix {matrix!r} is not an object")
            keys = list(matrix)
            combos = [dict(zip(keys, values)) for values in itertools.product(*(matrix[k] for k in keys))]
        results = []
        for combo in combos:
            label = name + (f" ({', '.join(map(str, combo.values()))})" if combo else "")
            strategy = {"job-total": len(combos), "job-index": len(results)}
            results.append(self._steps(label, job, data, run, {**contexts, "matrix": combo, "strategy": strategy}))
        merged = JobResult(name, "failure" if any(r.result == "failure" for r in results) else "success")
        merged.runs_on = evaluator.render(job.get("runs-on"))
        for r in results:
            merged.outputs.update(r.outputs)
            merged.logs += r.logs
            merged.summary += r.summary
            merged.python = merged.python or r.python
            merged.commands += r.commands
            merged.requests += r.requests
        run.jobs[name] = merged
        return merged

    def _call(self, name, job, run, github, evaluator, needs) -> JobResult:
        """A caller job `uses: huggingface/export-bot/.github/workflows/X.yml@SHA`: this checkout's X.yml."""
        repo_path, _, ref = job["uses"].partition("@")
        prefix = f"{BOT_REPOSITORY}/.github/workflows/"
        if not repo_path.startswith(prefix) or not ref:
            raise WorkflowError(f"job {name}: the step runner calls only {prefix}*.yml@SHA, not {job['uses']!r}")
        called = load_workflow(ROOT / ".github" / "workflows" / repo_path[len(prefix) :])
        declared = called["on"]["workflow_call"].get("inputs", {})
        given = evaluator.render(job.get("with", {}))
        unknown = set(given) - set(declared)
        if unknown:
            raise WorkflowError(f"job {name}: {job['uses']} declares no input {sorted(unknown)}")
        inputs = {}
        for key, spec in declared.items():
            if key in given:
                value = given[key]
                # GitHub coerces a passed value to the declared type (null → "" for a string).
                kind = spec.get("type")
                inputs[key] = int(value) if kind == "number" else bool(value) if kind == "boolean" else _string(value)
            elif spec.get("required"):
                raise WorkflowError(f"job {name}: required input {key} missing")
            else:
                inputs[key] = spec.get("default", "" if spec.get("type") == "string" else None)
        for key, (expected, local) in self.substitute.items():
            if key in inputs:
                if inputs[key] != expected:
                    raise WorkflowError(f"job {name}: input {key} is {inputs[key]!r}, not {expected!r}")
                self.substituted.append((name, key, inputs[key]))
                inputs[key] = local
        self.bot_ref = inputs.get("bot-ref")
        passed = evaluator.render(job.get("secrets") or {})
        declared_secrets = called["on"]["workflow_call"].get("secrets") or {}
        if not isinstance(passed, dict) or set(passed) - set(declared_secrets):
            raise WorkflowError(
                f"job {name}: {job['uses']} declares no secret {sorted(set(passed) - set(declared_secrets))}"
            )
        results = self._jobs(called, run, github, inputs, prefix=f"{name} / ", secrets=passed)
        result = JobResult(name, "failure" if any(r.result == "failure" for r in results.values()) else "success")
        run.jobs[name] = result
        return result

    # --- steps --------------------------------------------------------------------------------
    def _steps(self, label, job, data, run, contexts) -> JobResult:
        result = JobResult(label, "success")
        workspace = self.work / f"job-{next(self._count)}"
        workspace.mkdir(parents=True)
        temp = workspace.parent / (workspace.name + "-runner")
        temp.mkdir()
        summary = temp / "step-summary.md"
        summary.touch()
        env_base = {**_render_env(data.get("env"), contexts), **_render_env(job.get("env"), contexts)}
        steps: dict[str, dict] = {}
        path_prefix: list[str] = []
        failed = False
        installs_torch = any("torch==" in s.get("run", "") for s in job.get("steps", []))
        asked = len(self.fake.requests)  # the runner's own bookkeeping writes the fake's state directly
        for index, step in enumerate(job.get("steps", [])):
            ctx = {**contexts, "steps": steps}
            evaluator = Evaluator(
                ctx, lambda kind, failed=failed: {"success": not failed, "failure": failed}.get(kind, kind == "always")
            )
            if not evaluator.condition(step.get("if")):
                continue
            step_name = step.get("name") or step.get("uses") or f"step {index}"
            try:
                if "uses" in step:
                    outcome = self._action(step, evaluator, workspace, run, installs_torch, path_prefix, result)
                else:
                    outcome, outputs = self._shell(
                        step, evaluator, ctx, env_base, workspace, temp, summary, path_prefix, run, data, result
                    )
                    if step.get("id"):
                        steps[step["id"]] = {"outputs": outputs, "outcome": "success" if outcome else "failure"}
            except subprocess.TimeoutExpired as exc:
                raise WorkflowError(f"{label}: {step_name} timed out") from exc
            if not outcome and not step.get("continue-on-error"):
                failed = True
                result.logs.append(f"{label}: step {step_name!r} failed")
        result.result = "failure" if failed else "success"
        ctx = {**contexts, "steps": steps}
        result.outputs = {k: _string(Evaluator(ctx).render(v)) for k, v in (job.get("outputs") or {}).items()}
        result.summary = summary.read_text(encoding="utf-8")
        result.requests = list(self.fake.requests[asked:])
        return result

    def _shell(self, step, evaluator, ctx, env_base, workspace, temp, summary, path_prefix, run, data, result):
        output = temp / f"output-{len(result.logs)}-{os.urandom(3).hex()}"
        output.touch()
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTEST_XDIST_WORKER")}
        env = {k: v for k, v in env.items() if not k.startswith(("PYTEST_", "GITHUB_"))}
        event_path = temp / "event.json"
        event_path.write_text(json.dumps(ctx["github"]["event"]), encoding="utf-8")
        env.update(
            PATH=os.pathsep.join([*path_prefix, env["PATH"]]),
            GITHUB_ACTIONS="true",
            GITHUB_REPOSITORY=self.fake.full_name,
            GITHUB_API_URL=self.fake.url,
            GITHUB_RUN_ID=str(run.run_id),
            GITHUB_SHA=ctx["github"]["sha"],
            GITHUB_REF=ctx["github"]["ref"],
            GITHUB_EVENT_NAME=ctx["github"]["event_name"],
            GITHUB_EVENT_PATH=str(event_path),
            GITHUB_OUTPUT=str(output),
            GITHUB_STEP_SUMMARY=str(summary),
            GITHUB_WORKSPACE=str(workspace),
            RUNNER_TEMP=str(temp),
            TOKENIZERS_PARALLELISM="false",
            HF_HUB_OFFLINE="1",
        )
        env.update(env_base)
        env.update(_render_env(step.get("env"), ctx))
        script = step["run"]
        if "${{" in script:
            raise WorkflowError(f"{step.get('name')!r}: an expression in a shell line; pass it through env:")
        cwd = workspace / step.get("working-directory", "")
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=1500,
        )
        result.logs.append(f"$ {script.strip()}\n{proc.stdout[-6000:]}{proc.stderr[-6000:]}(exit {proc.returncode})")
        result.commands.append((script.strip(), _render_env(step.get("env"), ctx)))
        return proc.returncode == 0, _read_output(output)

    def _action(self, step, evaluator, workspace, run, installs_torch, path_prefix, result) -> bool:
        uses, with_ = step["uses"], evaluator.render(step.get("with") or {})
        if uses.startswith(CHECKOUT):
            self._checkout(with_, evaluator, workspace)
        elif uses.startswith(SETUP_PYTHON):
            lock = with_.get("cache-dependency-path")
            if with_.get("cache") and lock and not (workspace / lock).is_file():
                # setup-python fails the step when the file its cache key hashes is missing.
                raise WorkflowError(f"setup-python: cache-dependency-path {lock} matches no file")
            python = self._python(str(with_.get("python-version", "3.11")), workspace, installs_torch)
            path_prefix.insert(0, str(python.parent))
            result.python = python
        elif uses.startswith(UPLOAD):
            return self._upload(with_, workspace, run)
        elif uses.startswith(DOWNLOAD):
            return self._download(with_, workspace, run)
        elif uses.startswith(UPLOAD_PAGES):
            return self._upload(
                {"name": "github-pages", "path": with_["path"], "if-no-files-found": "error"}, workspace, run
            )
        elif uses.startswith(DEPLOY_PAGES):
            site = run.artifacts.get("github-pages")
            if site is None or not (site / "index.html").is_file():
                raise WorkflowError(
                    "deploy-pages: this run uploaded no site (no github-pages artifact with index.html)"
                )
        else:
            raise WorkflowError(f"the step runner does not stand in for {uses!r}")
        return True

    def _checkout(self, with_: dict, evaluator: Evaluator, workspace: Path) -> None:
        target = workspace / with_.get("path", "")
        repository = with_.get("repository") or self.fake.full_name
        if repository == BOT_REPOSITORY:
            # This checkout stands in for export-bot at the pinned ref: its tracked and new files.
            files = subprocess.run(
                ["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            for rel in files:
                source = ROOT / rel
                if source.is_file() and not source.is_symlink():
                    (target / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(source, target / rel)
                elif source.is_symlink():
                    (target / rel).parent.mkdir(parents=True, exist_ok=True)
                    os.symlink(os.readlink(source), target / rel)
            return
        if repository != self.fake.full_name:
            raise WorkflowError(f"checkout of {repository!r}: the step runner knows only the target and the bot")
        ref = with_.get("ref") or evaluator.contexts["github"]["sha"]
        subprocess.run(["git", "clone", "-q", "--no-checkout", str(self.origin), str(target)], check=True)
        known = subprocess.run(["git", "-C", str(target), "cat-file", "-e", f"{ref}^{{commit}}"], capture_output=True)
        if ref.startswith("refs/") or known.returncode != 0:
            # A clone has branches and tags only: refs/pull/N/merge, and a commit only it reaches,
            # are fetched by name, as actions/checkout does.
            subprocess.run(["git", "-C", str(target), "fetch", "-q", "origin", ref], check=True)
            ref = "FETCH_HEAD"
        subprocess.run(["git", "-C", str(target), "checkout", "-q", "--detach", ref], check=True)

    def _python(self, version: str, workspace: Path, installs_torch: bool) -> Path:
        if installs_torch and self.runner_python is not None:
            return self.runner_python
        if not installs_torch and self.share_light and self.light_python is not None:
            return self.light_python
        if version not in PYTHONS:
            raise WorkflowError(f"setup-python {version}: the step runner has {sorted(PYTHONS)}")
        venv = workspace.parent / (workspace.name + "-venv")
        interpreter = Path(sys.base_prefix) / "bin" / f"python{PYTHONS[version]}"
        subprocess.run([str(interpreter), "-m", "venv", str(venv)], check=True)
        python = venv / "bin" / "python"
        if installs_torch:
            self.runner_python = python
        elif self.share_light:
            self.light_python = python
        return python

    def _upload(self, with_: dict, workspace: Path, run: WorkflowRun) -> bool:
        name = with_["name"]
        folder = self.work / "artifacts" / str(run.run_id) / name
        pattern = workspace / with_["path"]
        matches = [p for p in pattern.parent.glob(pattern.name)] if "*" in pattern.name else [pattern]
        if not any(m.is_file() or (m.is_dir() and any(f.is_file() for f in m.rglob("*"))) for m in matches):
            # upload-artifact v4 with no file to upload makes no artifact: `if-no-files-found` warns
            # (the default) or ignores, and a later download of the name fails; `error` fails the step.
            return with_.get("if-no-files-found", "warn") != "error"
        if name in run.artifacts:
            # upload-artifact v4: a run holds one artifact per name; a second upload is a 409
            # Conflict unless it says `overwrite: true`, which deletes the first one.
            if not with_.get("overwrite"):
                raise WorkflowError(f"upload-artifact: run {run.run_id} already has an artifact named {name!r}")
            self._delete_artifact(run, name)
        folder.mkdir(parents=True, exist_ok=True)
        for match in matches:
            if match.is_dir():
                shutil.copytree(match, folder, dirs_exist_ok=True)
            elif match.is_file():
                shutil.copy2(match, folder / match.name)
        run.artifacts[name] = folder
        # GitHub keeps the artifact on the run: `export-bot github baseline` and `comment` read it back.
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            for file in sorted(folder.rglob("*")):
                if file.is_file():
                    archive.write(file, file.relative_to(folder).as_posix())
        aid = self.fake.new_id()
        self.fake.state.artifacts[aid] = {"name": name, "run": run.run_id, "data": buffer.getvalue(), "expired": False}
        for record in self.fake.state.runs:
            if record["id"] == run.run_id:
                record["artifacts"].append(aid)
        return True

    def _delete_artifact(self, run: WorkflowRun, name: str) -> None:
        shutil.rmtree(run.artifacts.pop(name))
        for aid, artifact in list(self.fake.state.artifacts.items()):
            if artifact["run"] == run.run_id and artifact["name"] == name:
                del self.fake.state.artifacts[aid]
                for record in self.fake.state.runs:
                    if record["id"] == run.run_id:
                        record["artifacts"].remove(aid)

    def _download(self, with_: dict, workspace: Path, run: WorkflowRun) -> bool:
        source = self.runs[int(with_["run-id"])] if with_.get("run-id") else run
        target = workspace / with_.get("path", "")
        target.mkdir(parents=True, exist_ok=True)
        if "name" in with_:
            names = [with_["name"]]
        else:
            names = [n for n in source.artifacts if fnmatch.fnmatch(n, with_["pattern"])]
        found = False
        for name in names:
            folder = source.artifacts.get(name)
            if folder is None:
                continue
            found = True
            into = target if with_.get("merge-multiple") or "name" in with_ else target / name
            shutil.copytree(folder, into, dirs_exist_ok=True)
        return found or "pattern" in with_


def local_index(folder: Path, wheel_glob: str) -> str | None:
    """A PEP 503 index in `folder` holding the one wheel pip's find-links dirs have for `wheel_glob`, or None.

    The workflows install torch from the PyTorch CPU index alone (--index-url); a machine that
    cannot reach it but holds the same wheel locally gets an index with that wheel instead.
    """
    dirs = os.environ.get("PIP_FIND_LINKS", "").split()
    config = subprocess.run(
        [sys.executable, "-m", "pip", "config", "get", "global.find-links"], capture_output=True, text=True
    )
    dirs += config.stdout.split()
    wheels = sorted(w for d in dirs if Path(d).is_dir() for w in Path(d).glob(wheel_glob))
    if not wheels:
        return None
    project = wheels[0].name.split("-")[0].lower()
    page = folder / project / "index.html"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(f'<a href="{wheels[0].as_uri()}">{wheels[0].name}</a>\n', encoding="utf-8")
    return folder.as_uri()


def _matches(path: str, patterns: list[str]) -> bool:
    """GitHub's paths filter for the patterns the callers use (`dir/**`, plain files)."""
    for pattern in patterns:
        if pattern.endswith("/**") and path.startswith(pattern[:-2]):
            return True
        if fnmatch.fnmatchcase(path, pattern):
            return True
    return False


def _needs(job: dict) -> list[str]:
    needs = job.get("needs") or []
    return [needs] if isinstance(needs, str) else list(needs)


def _render_env(env: dict | None, contexts: dict) -> dict[str, str]:
    evaluator = Evaluator(contexts)
    return {k: _string(evaluator.render(v)) for k, v in (env or {}).items()}


def _string(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _read_output(path: Path) -> dict[str, str]:
    """`$GITHUB_OUTPUT` as GitHub reads it: `name=value` lines and `name<<DELIMITER` heredocs."""
    outputs, lines, i = {}, path.read_text(encoding="utf-8").splitlines(), 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, _, delimiter = line.partition("<<")
            end = lines.index(delimiter, i + 1)
            outputs[key] = "\n".join(lines[i + 1 : end])
            i = end + 1
            continue
        if "=" in line:
            key, _, value = line.partition("=")
            outputs[key] = value
        i += 1
    return outputs


__all__ = ["ExpressionError", "JobResult", "Runner", "WorkflowError", "WorkflowRun", "load_workflow", "local_index"]
