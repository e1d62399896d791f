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
