"""The rehearsal's step runner: the expressions it evaluates, and what it refuses loudly."""

from __future__ import annotations

import pytest

from tests.rehearsal.expressions import Evaluator, ExpressionError
from tests.rehearsal.runner import Runner, WorkflowError

CONTEXTS = {
    "github": {"event_name": "pull_request", "event": {"pull_request": {"head": {"sha": "abc"}}}, "run_id": "7"},
    "inputs": {"sha": "", "shards": 4, "bot-ref": "f" * 40},
    "needs": {"select": {"result": "success", "outputs": {"count": "0", "matrix": '{"shard": [1, 2]}'}}},
}


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("inputs.sha || github.event.pull_request.head.sha", "abc"),
        ("github.event.pull_request.base.sha", None),
        ("needs.select.outputs.count != '0'", False),
        ("fromJSON(needs.select.outputs.matrix)", {"shard": [1, 2]}),
        ("format('origin/{0}', 'main')", "origin/main"),
        ("github.event_name == 'workflow_dispatch' && format('x {0}', inputs.sha) || ''", ""),
        ("always() && needs.select.result == 'success'", True),
        ("startsWith('/export-check apply', '/export-check')", True),
        ("inputs.bot-ref", "f" * 40),
        ("!inputs.sha", True),
    ],
)
def test_the_expressions_the_workflows_use(expression, value):
    assert Evaluator(CONTEXTS).evaluate(expression) == value


def test_templates_keep_a_whole_expression_typed_and_render_mixed_text_as_a_string():
    evaluator = Evaluator(CONTEXTS)
    assert evaluator.render("${{ inputs.shards }}") == 4
    assert evaluator.render("run ${{ github.run_id }}/${{ inputs.shards }}") == "run 7/4"


@pytest.mark.parametrize("expression", ["secrets.TOKEN", "hashFiles('x')", "vars.X", "inputs.sha +"])
def test_unknown_contexts_functions_and_syntax_are_refused(expression):
    with pytest.raises(ExpressionError):
        Evaluator(CONTEXTS).evaluate(expression)


def test_a_condition_without_a_status_function_needs_success():
    failed = Evaluator(CONTEXTS, status=lambda kind: kind in ("failure", "always"))
    assert failed.condition("inputs.shards == 4") is False
    assert failed.condition("always() && inputs.shards == 4") is True


def test_any_other_action_is_refused(tmp_path):
    runner = Runner(origin=tmp_path, fake=None, work=tmp_path)
    with pytest.raises(WorkflowError, match="does not stand in for 'docker/login-action@v3'"):
        runner._action({"uses": "docker/login-action@v3"}, Evaluator(CONTEXTS), tmp_path, None, False, [], None)


def test_the_checkout_and_merge_expressions_of_the_conformance_workflow():
    merge = "github.event_name == 'merge_group' && github.event.merge_group.head_sha || format('refs/pull/{0}/merge', inputs.pr || github.event.pull_request.number)"
    pull = {**CONTEXTS["github"], "event": {"pull_request": {"number": 7, "head": {"sha": "abc"}}}}
    queue = {**CONTEXTS["github"], "event_name": "merge_group", "event": {"merge_group": {"head_sha": "q" * 40}}}
    assert Evaluator({**CONTEXTS, "github": pull}).evaluate(merge) == "refs/pull/7/merge"
    assert Evaluator({**CONTEXTS, "github": queue}).evaluate(merge) == "q" * 40
    dispatched = {**CONTEXTS, "inputs": {**CONTEXTS["inputs"], "pr": "12"}}
    assert Evaluator({**dispatched, "github": {**pull, "event": {}}}).evaluate(merge) == "refs/pull/12/merge"


def test_an_input_is_swapped_for_its_stand_in_only_when_the_workflow_gives_the_expected_value(tmp_path):
    from tests.rehearsal.runner import ROOT, load_workflow

    runner = Runner(origin=tmp_path, fake=None, work=tmp_path, substitute={"torch-index": ("https://cpu", "file:///x")})
    called = load_workflow(ROOT / ".github" / "workflows" / "conformance.yml")
    job = {"uses": "huggingface/export-bot/.github/workflows/conformance.yml@" + "f" * 40, "with": {"bot-ref": "f"}}
    runner._jobs = lambda data, run, github, inputs, prefix, secrets=None: (seen.append(inputs), {})[1]
    seen = []
    with pytest.raises(WorkflowError, match="input torch-index is 'https://download.pytorch.org/whl/cpu'"):
        runner._call("conformance", job, type("Run", (), {"jobs": {}})(), {}, Evaluator(CONTEXTS), {})
    runner.substitute = {
        "torch-index": (called["on"]["workflow_call"]["inputs"]["torch-index"]["default"], "file:///x")
    }
    runner._call("conformance", job, type("Run", (), {"jobs": {}})(), {}, Evaluator(CONTEXTS), {})
    assert seen[-1]["torch-index"] == "file:///x"
    assert runner.substituted == [("conformance", "torch-index", "https://download.pytorch.org/whl/cpu")]


def test_a_local_index_holds_the_one_wheel_found_on_pips_find_links(tmp_path, monkeypatch):
    from tests.rehearsal.runner import local_index

    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    url = local_index(tmp_path / "index", "torch-2.13.0*.whl")
    page = (tmp_path / "index" / "torch" / "index.html").read_text()
    assert url == (tmp_path / "index").as_uri() and "torch-2.13.0+cpu-cp311" in page
    assert local_index(tmp_path / "none", "nothing-1.0*.whl") is None


def test_a_second_artifact_of_one_name_is_a_conflict_unless_it_overwrites_the_first(tmp_path):
    """upload-artifact v4: one artifact per name and run; `overwrite: true` deletes the older one."""
    from tests.github.fake_github import FakeGitHub
    from tests.rehearsal.runner import WorkflowRun

    fake = FakeGitHub(repo="o/r")
    runner = Runner(origin=tmp_path, fake=fake, work=tmp_path / "work")
    run_id = fake.add_run("w.yml", head_sha="a" * 40, branch="main", conclusion="in_progress", event="push")
    run = WorkflowRun("w.yml", run_id)
    workspace = tmp_path / "job"
    workspace.mkdir()
    (workspace / "first.json").write_text("1")
    (workspace / "second.json").write_text("2")
    runner._upload({"name": "state", "path": "first.json"}, workspace, run)
    with pytest.raises(WorkflowError, match="already has an artifact named 'state'"):
        runner._upload({"name": "state", "path": "second.json"}, workspace, run)
    runner._upload({"name": "state", "path": "second.json", "overwrite": True}, workspace, run)
    [artifact] = [a for a in fake.state.artifacts.values() if a["run"] == run_id]
    assert [p.name for p in run.artifacts["state"].iterdir()] == ["second.json"] and artifact["name"] == "state"
    [record] = [r for r in fake.state.runs if r["id"] == run_id]
    assert record["artifacts"] == [next(iter(k for k, a in fake.state.artifacts.items() if a["run"] == run_id))]


def test_a_called_workflow_gets_the_secrets_its_caller_passes_and_declares(tmp_path):
    runner = Runner(origin=tmp_path, fake=None, work=tmp_path)
    seen = []
    runner._jobs = lambda data, run, github, inputs, prefix, secrets=None: (seen.append(secrets), {})[1]
    job = {"uses": "huggingface/export-bot/.github/workflows/baseline.yml@" + "f" * 40, "with": {"bot-ref": "f"}}
    run = type("Run", (), {"jobs": {}})()
    runner._call(
        "baseline", {**job, "secrets": {"OBSOLETE_SKIPS_TOKEN": "app-token"}}, run, {}, Evaluator(CONTEXTS), {}
    )
    assert seen == [{"OBSOLETE_SKIPS_TOKEN": "app-token"}]
    with pytest.raises(WorkflowError, match=r"declares no secret \['OTHER'\]"):
        runner._call("baseline", {**job, "secrets": {"OTHER": "x"}}, run, {}, Evaluator(CONTEXTS), {})
