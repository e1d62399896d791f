"""Main's health, rehearsed: pushes and sweeps of export-baseline.yml, PRs judged at their merge base, as written.

The target is tests/rehearsal/target.py's Transformers 5.24.0.dev0 from the real sdist, with the
caller workflows of examples/transformers run by tests/rehearsal/runner.py against the fake GitHub
(as test_rehearsal.py, whose nightly proves the light install; the light jobs here share one).
Its `core` is BertModel and `modeling_outputs.py` is a shared path, so a shared-file push runs
two cells and a non-core class (BertForSequenceClassification) can break unseen. One flaky cell
is real and deterministic: a hook in the target's tester (FLAKY_HOOK) fails the first N attempts
of a named cell within one workflow run, inside the traced forward, so its export fails while
eager passes. Scenarios, in order: the first full sweep; (f) the PR that breaks BertModel.forward:
its comment leads with the group, the culprit line and the hint, the proposal folded below; (b)
merged, its push opens one tracking issue naming the push's commit and PR; (e) a push fixing it
closes the issue; (a) a PR based on the breaking push, after the fix: judged against the breaking
push's results; (c) a push of five commits, one of them breaking the non-core class through a
shared file, makes the full sweep due and starts it at once; that sweep finds the break and the
bisect names that commit; the same push's confirming re-run disagreed on a flaky BertModel cell and the sweep of the
same commit disagreed again; (d) a PR meeting that cell failing is shown it as flaky, verdict green.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from bot.cells import Cell
from bot.publish.tracking import MARKER
from bot.results.baseline import Baseline
from bot.results.baseline_json import loads
from tests.e2e.checkout import commit_all, git, write
from tests.github.fake_github import FakeGitHub
from tests.github.routes import associate
from tests.rehearsal.runner import Runner, WorkflowRun, local_index
from tests.rehearsal.target import CONFIG, MODELING_BERT, branch, break_bert_forward, make_target, merge_ref
from tests.rehearsal.test_rehearsal import CPU_INDEX, Rehearsal

pytestmark = [pytest.mark.rehearsal, pytest.mark.export, pytest.mark.timeout(1800)]

OUTPUTS = "src/transformers/modeling_outputs.py"
BM_STATIC, BM_DYNAMIC = (f"BertModel::test_torch_export_{shape}" for shape in ("static", "dynamic"))
SC_STATIC, SC_DYNAMIC = (f"BertForSequenceClassification::test_torch_export_{shape}" for shape in ("static", "dynamic"))
ALL = {BM_STATIC, BM_DYNAMIC, SC_STATIC, SC_DYNAMIC}
HEALTH_CONFIG = (
    CONFIG
    + 'core = ["BertModel"]\n'
    + 'shared-paths = ["src/transformers/modeling_utils.py", "src/transformers/modeling_outputs.py"]\n'
)
CALLER_INPUTS = {
    "export-conformance.yml": {"shards": 1},
    "export-baseline.yml": {"shards": 1, "push-shards": 1, "dashboard": "false"},
}
PUSH_JOBS = ("plan", "measure", "report", "merge", "track")
SWEEP_DISPATCH = {"workflow": "export-baseline.yml", "ref": "main", "inputs": {"full": "true"}}

# The target's own test code, appended to its BERT tester: the flake a Transformers test may have.
FLAKY_HOOK = """

# Rehearsal hook (export-bot's tests/rehearsal/test_main_health.py): a deterministic flaky cell.
# $REHEARSAL_FLAKES/spec.json names cells and how many of their first attempts within one workflow
# run ($GITHUB_RUN_ID) fail; each attempt claims the next number in a folder of that run. The
# attempt is decided on the eager call, and a failing one raises inside the traced forward only.
import functools as _functools
import json as _json
import os as _os
from pathlib import Path as _Path

import torch as _torch


def _rehearsal_attempt_fails():
    folder = _os.environ.get("REHEARSAL_FLAKES")
    spec = _Path(folder or ".", "spec.json")
    if not folder or not spec.is_file():
        return False
    current = _os.environ.get("PYTEST_CURRENT_TEST", "")
    wanted = _json.loads(spec.read_text())
    cell = next((c for c in wanted if c in current), None)
    if cell is None:
        return False
    attempts = _Path(folder, _os.environ.get("GITHUB_RUN_ID", "0"), cell.replace("::", "--"))
    attempts.mkdir(parents=True, exist_ok=True)
    number = 1
    while True:
        try:
            _os.close(_os.open(attempts / str(number), _os.O_CREAT | _os.O_EXCL))
            break
        except FileExistsError:
            number += 1
    return number <= wanted[cell]


def _rehearsal_flaky(model_class):
    forward = model_class.forward

    # wraps: the test exports with dynamic shapes keyed by forward's own argument names, which
    # torch.export reads from the signature (inspect follows __wrapped__).
    @_functools.wraps(forward)
    def flaky_forward(self, *args, **kwargs):
        if not _torch.compiler.is_exporting() and "_rehearsal_fails" not in self.__dict__:
            self.__dict__["_rehearsal_fails"] = _rehearsal_attempt_fails()
        if self.__dict__.get("_rehearsal_fails") and _torch.compiler.is_exporting():
            raise RuntimeError("a flaky failure: this attempt fails (rehearsal hook)")
        return forward(self, *args, **kwargs)

    model_class.forward = flaky_forward


_rehearsal_flaky(BertModel)
"""


def break_sequence_outputs(repo: Path) -> str:
    """modeling_outputs.py whose SequenceClassifierOutput checks its logits with a data-dependent branch."""
    text = (repo / OUTPUTS).read_text(encoding="utf-8")
    anchor = (
        "    attentions: tuple[torch.Tensor, ...] | None = None\n\n\n@dataclass\nclass Seq2SeqSequenceClassifierOutput"
    )
    assert anchor in text, "SequenceClassifierOutput moved in the sdist"
    check = (
        "    attentions: tuple[torch.Tensor, ...] | None = None\n\n"
        "    def __post_init__(self):\n"
        "        super().__post_init__()\n"
        "        if self.logits is not None and bool(self.logits.isnan().any()):\n"
        '            raise ValueError("NaN logits")\n'
    )
    return text.replace(anchor, anchor.replace("    attentions: tuple[torch.Tensor, ...] | None = None\n", check), 1)


def test_main_health(tmp_path, monkeypatch):
    fake = FakeGitHub(repo="huggingface/transformers").start()
    monkeypatch.setenv("REHEARSAL_FLAKES", str(tmp_path / "flakes"))
    try:
        MainHealth(tmp_path, fake).play()
    finally:
        fake.stop()


class MainHealth(Rehearsal):
    def __init__(self, tmp_path: Path, fake: FakeGitHub):
        self.fake, self.tmp = fake, tmp_path
        self.timings: list[tuple[str, float]] = []
        start = time.monotonic()
        self.origin = tmp_path / "transformers"
        self.main = make_target(
            self.origin, config=HEALTH_CONFIG, skips="", caller_inputs=CALLER_INPUTS, tester_extra=FLAKY_HOOK
        )
        self.mirror(self.main, ())
        fake.state.refs["heads/main"] = self.main
        local = local_index(tmp_path / "torch-index", "torch-2.13.0*.whl") or CPU_INDEX
        self.runner = Runner(
            origin=self.origin,
            fake=fake,
            work=tmp_path / "runs",
            substitute={"torch-index": (CPU_INDEX, local)},
            share_light=True,
        )
        self.flakes = tmp_path / "flakes"
        self.timings.append(("target", time.monotonic() - start))

    def play(self) -> None:
        for step in (
            self.first_sweep,
            self.breaking_pr_leads_with_the_fix,
            self.breaking_push_opens_the_issue,
            self.fixing_push_closes_the_issue,
            self.pr_on_the_breaking_push,
            self.shared_push_then_the_sweep_bisects,
            self.flaky_cell_on_a_pr,
        ):
            start = time.monotonic()
            step()
            self.timings.append((step.__name__, time.monotonic() - start))
        print("\n".join(f"{name}: {seconds:.0f} s" for name, seconds in self.timings))

    # --- the first full sweep -------------------------------------------------------------------
    def first_sweep(self) -> None:
        run = self.schedule()
        self.assert_jobs(run, {"baseline", *(f"baseline / {job}" for job in (*PUSH_JOBS, "obsolete-skips"))})
        assert run.jobs["baseline / bisect"].result == "skipped"
        state = self.state(run)
        assert {cell.id for cell in state.cells} == ALL, state.cells.keys()
        assert [commit for commit, _ in state.full_sweeps] == [self.main]
        report = json.loads((run.artifacts["export-sweep"] / "report.json").read_text())
        assert {line["cell"] for line in report["cells"]} == ALL and report["head_sha"] == self.main
        # The next night nothing is due: the plan job alone runs, on the light install.
        quiet = self.schedule()
        assert quiet.jobs["baseline / plan"].outputs["mode"] == "none"
        assert {name for name, job in quiet.jobs.items() if job.result != "skipped"} == {"baseline", "baseline / plan"}

    # --- (f) ------------------------------------------------------------------------------------
    def breaking_pr_leads_with_the_fix(self) -> None:
        self.good = self.main
        head = branch(self.origin, "bert-guard", {MODELING_BERT: break_bert_forward(self.origin)}, "Bert: guard ids")
        self.mirror(head, (self.main,), extra=(MODELING_BERT,))
        self.fake.state.refs["heads/bert-guard"] = head
        self.fake.open_pull(11, "bert-guard", title="Bert: refuse negative ids")
        merge_ref(self.origin, 11, head)
        run = self.pull_request(11, head, [MODELING_BERT])
        report = self.report_of(run)
        assert report["verdict"] == "failure" and report["baseline_age"]["merge_base"] == self.main
        assert {line["cell"] for line in report["categories"]["newly_broken"]} == ALL
        self.publish(run, head, pr_numbers=[11])
        [body] = self.stickies(11)
        group = body.index("`src/transformers/models/bert/modeling_bert.py:")
        hint = body.index("torch._check")
        folded = body.index("<details>")
        assert group < hint < folded, body
        assert "if this break is intended" in body[folded:], body
        self.bert_guard = head

    # --- (b) ------------------------------------------------------------------------------------
    def breaking_push_opens_the_issue(self) -> None:
        edits = {MODELING_BERT: git(self.origin, "show", f"{self.bert_guard}:{MODELING_BERT}", strip=False)}
        run, [sha] = self.push([(edits, "Bert: refuse negative ids (#11)")], pr=11)
        self.assert_jobs(run, {f"baseline / {job}" for job in PUSH_JOBS})
        assert run.jobs["baseline / bisect"].result == "skipped", "the push named its own culprit"
        report = json.loads((run.artifacts["export-run-report"] / "report.json").read_text())
        assert {line["cell"] for line in report["categories"]["newly_broken"]} == ALL
        assert report["baseline_age"]["merge_base"] == self.good
        [(number, issue)] = self.tracking().items()
        assert issue["state"] == "open", issue
        body = issue["body"]
        assert f"[`{sha[:12]}`](https://github.com/huggingface/transformers/commit/{sha})" in body, body
        assert "[#11](https://github.com/huggingface/transformers/pull/11)" in body, body
        assert all(f"`{cell}`" in body for cell in ALL), body
        self.issue, self.first_push = number, sha

    # --- (e) ------------------------------------------------------------------------------------
    def fixing_push_closes_the_issue(self) -> None:
        good = git(self.origin, "show", f"{self.good}:{MODELING_BERT}", strip=False)
        run, [sha] = self.push([({MODELING_BERT: good}, "Bert: accept negative ids again")])
        self.assert_jobs(run, {f"baseline / {job}" for job in PUSH_JOBS})
        report = json.loads((run.artifacts["export-run-report"] / "report.json").read_text())
        assert {line["cell"] for line in report["categories"]["newly_passing"]} == ALL
        assert self.tracking()[self.issue]["state"] == "closed", self.tracking()
        self.second_push = sha

    # --- (a) ------------------------------------------------------------------------------------
    def pr_on_the_breaking_push(self) -> None:
        """Branched from the first push, tested after the second: judged at its merge base, the first push."""
        text = git(self.origin, "show", f"{self.first_push}:{MODELING_BERT}", strip=False)
        edited = text + '\n_NOTE = "Bert: a note for readers."\n'
        head = branch(self.origin, "bert-note", {MODELING_BERT: edited}, "Bert: a note", start=self.first_push)
        self.mirror(head, (self.first_push,), extra=(MODELING_BERT,))
        self.fake.state.refs["heads/bert-note"] = head
        self.fake.open_pull(50, "bert-note", title="Bert: a note")
        merge_ref(self.origin, 50, head)
        run = self.pull_request(50, head, [MODELING_BERT])
        report = self.report_of(run)
        age = report["baseline_age"]
        assert (age["merge_base"], age["newest"], age["merge_base_known"]) == (self.first_push, self.first_push, True)
        # The merge holds the second push's fix: the cells the first push broke pass again. Against
        # main's newest results (the second push's) they would have been passing all along.
        assert {line["cell"] for line in report["categories"]["newly_passing"]} == ALL, report["categories"]
        assert report["verdict"] == "success"

    # --- (c) ------------------------------------------------------------------------------------
    def shared_push_then_the_sweep_bisects(self) -> None:
        self.flaky({BM_STATIC: 1})  # the push's first attempt fails, its confirming re-run passes
        notes = [({f"docs/source/en/notes_{i}.md": f"# Notes {i}\n"}, f"Docs: notes {i}") for i in range(1, 6)]
        notes[1] = ({OUTPUTS: break_sequence_outputs(self.origin)}, "Outputs: refuse NaN logits")
        run, shas = self.push(notes)
        self.flaky({})
        self.assert_jobs(run, {f"baseline / {job}" for job in PUSH_JOBS})
        selection = json.loads((run.artifacts["export-selection"] / "selection.json").read_text())
        assert set(selection["cells"]) == {BM_STATIC, BM_DYNAMIC}, "core only: the shared file"
        assert selection["full_sweep_due"] == [f"shared: {OUTPUTS}"]
        report = json.loads((run.artifacts["export-run-report"] / "report.json").read_text())
        assert [line["cell"] for line in report["categories"]["flaky"]] == [BM_STATIC], report["categories"]
        assert run.jobs["baseline / bisect"].result == "skipped", "a flake is no regression"
        state = self.state(run)
        [measured] = [m for m in state.cells[Cell.parse(BM_STATIC)] if m.commit == shas[-1]]
        assert measured.flipped and [commit for commit, _ in state.due] == [shas[-1]]
        # The push's plan started the sweep at once; its merge found it still to measure and started none.
        assert self.fake.state.dispatches == [SWEEP_DISPATCH], self.fake.state.dispatches

        sweep = self.dispatched()
        jobs = (*PUSH_JOBS, "bisect", "merge-bisected", "track-bisected")
        self.assert_jobs(sweep, {f"baseline / {job}" for job in jobs})
        report = json.loads((sweep.artifacts["export-sweep"] / "report.json").read_text())
        failing = {line["cell"] for line in report["cells"] if line["status"] == "failed"}
        assert failing == {SC_STATIC, SC_DYNAMIC}, failing
        [(number, issue)] = [(n, i) for n, i in self.tracking().items() if i["state"] == "open"]
        body = issue["body"]
        culprit = shas[1]
        assert f"[`{culprit[:12]}`](https://github.com/huggingface/transformers/commit/{culprit})" in body, body
        assert "bisect pending" not in body and f"`{SC_STATIC}`" in body and f"`{BM_STATIC}`" not in body, body
        state = self.state(sweep)
        bisected = {m.commit for ms in state.cells.values() for m in ms if m.source == "bisect"}
        # Besides the candidates, the bisect confirms both ends (docs/baseline.md): the last pass is re-run too.
        passes = {
            m.commit
            for ms in state.cells.values()
            for m in ms
            if m.source != "bisect" and m.result.status.value == "passed"
        }
        assert culprit in bisected and bisected <= set(shas) | passes, bisected
        assert self.fake.state.dispatches == [SWEEP_DISPATCH], "the sweep answered the reason: no other starts"
        self.shared_push = shas

    # --- (d) ------------------------------------------------------------------------------------
    def flaky_cell_on_a_pr(self) -> None:
        """BertModel static flipped twice on main; on this PR it fails twice: flaky, not this PR's break."""
        text = (self.origin / MODELING_BERT).read_text(encoding="utf-8") + '\n_NOTE = "Bert: another note."\n'
        head = branch(self.origin, "bert-note-2", {MODELING_BERT: text}, "Bert: another note")
        self.mirror(head, (self.main,), extra=(MODELING_BERT,))
        self.fake.state.refs["heads/bert-note-2"] = head
        self.fake.open_pull(90, "bert-note-2", title="Bert: another note")
        merge_ref(self.origin, 90, head)
        self.flaky({BM_STATIC: 2})  # the first attempt and the confirming re-run both fail
        run = self.pull_request(90, head, [MODELING_BERT])
        self.flaky({})
        report = self.report_of(run)
        [line] = report["categories"]["flaky"]
        assert (line["cell"], line["flips"]) == (BM_STATIC, 2), line
        # The shared push's break is main's, not this PR's: failing on main too.
        assert {line["cell"] for line in report["categories"]["broken_trunk"]} == {SC_STATIC, SC_DYNAMIC}
        assert not report["categories"].get("newly_broken") and report["verdict"] != "failure", report["headline"]
        self.publish(run, head, pr_numbers=[90])
        [body] = self.stickies(90)
        assert "flaky on main: flipped 2×" in body and "**failure**" not in body, body

    # --- helpers --------------------------------------------------------------------------------
    def schedule(self) -> WorkflowRun:
        event = {"schedule": "17 3 * * *", "repository": self.fake.repo}
        return self.runner.run("export-baseline.yml", event_name="schedule", event=event, sha=self.main)

    def dispatched(self) -> WorkflowRun:
        """The sweep a due push dispatched, run as GitHub starts it: the caller on main's head then, `full: true`."""
        [queued] = [r for r in self.fake.state.runs if r["event"] == "workflow_dispatch" and r["status"] == "queued"]
        event = {"inputs": SWEEP_DISPATCH["inputs"], "ref": "refs/heads/main", "repository": self.fake.repo}
        run = self.runner.run(
            "export-baseline.yml", event_name="workflow_dispatch", event=event, sha=queued["head_sha"]
        )
        self.fake.finish_run(queued["id"], "success")
        return run

    def push(self, commits: list[tuple[dict[str, str], str]], *, pr: int | None = None) -> tuple[WorkflowRun, list]:
        """Commits pushed to main at once (a merged PR's squash commit names its PR); the push's run."""
        before, shas = self.main, []
        for edits, message in commits:
            for path, text in edits.items():
                write(self.origin / path, text)
            shas.append(commit_all(self.origin, message))
            self.mirror(shas[-1], (shas[-2] if len(shas) > 1 else before,), extra=tuple(edits))
        self.main = shas[-1]
        self.fake.state.refs["heads/main"] = self.main
        if pr is not None:
            self.fake.close_pull(pr, merged=True)
            associate(self.fake, self.main, pr)
        changed = git(self.origin, "diff", "--name-only", before, self.main).split()
        event = {
            "ref": "refs/heads/main",
            "before": before,
            "after": self.main,
            "forced": False,
            "commits": [{"id": sha, "message": message} for sha, (_, message) in zip(shas, commits)],
            "head_commit": {"id": self.main, "message": commits[-1][1]},
            "repository": self.fake.repo,
        }
        run = self.runner.run("export-baseline.yml", event_name="push", event=event, sha=self.main, changed=changed)
        assert run is not None, f"a push of {changed} starts the baseline workflow"
        return run, shas

    def flaky(self, spec: dict[str, int]) -> None:
        shutil.rmtree(self.flakes, ignore_errors=True)
        self.flakes.mkdir()
        (self.flakes / "spec.json").write_text(json.dumps(spec), encoding="utf-8")

    def state(self, run: WorkflowRun) -> Baseline:
        path = run.artifacts["export-baseline"] / "baseline.json"
        return loads(path.read_text(encoding="utf-8"), where=str(path))

    def tracking(self) -> dict[int, dict]:
        issues = self.fake.state.issues.items()
        return {n: i for n, i in issues if not i.get("pull") and i.get("body", "").startswith(MARKER)}
