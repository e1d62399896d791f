"""A pull request is judged by `[tool.export-bot]` at its base: its own edits are listed, to apply after the merge."""

from __future__ import annotations

import json
import os

from click.testing import CliRunner

from bot.cells import BACKENDS, Cell
from bot.cli import main
from tests.select.conftest import MODELS, commit_all, git

GPT2 = f"{MODELS}/gpt2/modeling_gpt2.py"


def select(repo, *args: str):
    return CliRunner().invoke(main, ["select", "--repo", str(repo), "--base", "main", "--head", "pr", *args])


def on_main(repo, pyproject: str) -> None:
    """`pyproject` committed on the base: the clone's `pr` branch starts from it."""
    (repo / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    commit_all(repo, "settings on main")
    git(repo, "branch", "-f", "main", "pr")


def test_a_pr_narrowing_backends_runs_every_backend_and_lists_its_edit_to_apply_after_the_merge(repo):
    on_main(repo, '[project]\nname = "transformers"\n')
    (repo / "pyproject.toml").write_text(
        '[project]\nname = "transformers"\n\n[tool.export-bot]\nbackends = ["dynamo"]\n', encoding="utf-8"
    )
    gpt2 = repo / GPT2
    gpt2.write_text(gpt2.read_text(encoding="utf-8") + "\n_CHANGED = True\n", encoding="utf-8")
    skips = repo / "skiplists/export_skips.toml"
    skips.write_text(
        skips.read_text(encoding="utf-8").replace('["onnx.dynamic"]\n', '["onnx.dynamic"]\nBertModel = "r"\n', 1)
    )
    commit_all(repo, "gpt2, gated on dynamo only, and a skip")
    result = select(repo)
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)

    backends = {Cell.parse(c).backend for c in document["cells"] if c.startswith("GPT2Model::")}
    assert backends == set(BACKENDS), "the PR's own `backends` does not narrow its gate"
    assert document["settings"] == {"file": "pyproject.toml", "commit": document["base_sha"], "table": {}}
    assert document["settings_after_merge"] == [{"key": "backends", "base": None, "head": ["dynamo"]}]
    # The skiplist edit counts now: it is how a PR accepts a break.
    assert document["cells"].count("BertModel::test_onnx_export_dynamic") == 1

    from bot.select.base_settings import comment_notes

    assert comment_notes(document) == (
        '[tool.export-bot] backends: unset → ["dynamo"] — applies after the merge; this run is judged by the '
        f"base's settings at {document['base_sha'][:12]}",
        "skiplist edit, counted now: skiplists/export_skips.toml [onnx.dynamic] BertModel added",
    )


def test_the_later_stages_judge_by_the_bases_skiplist_location(repo, tmp_path):
    on_main(repo, '[tool.export-bot]\nskiplists = "skiplists"\n')
    # The PR points the skiplists elsewhere, a folder it does not even have: after the merge, not now.
    (repo / "pyproject.toml").write_text('[tool.export-bot]\nskiplists = "elsewhere"\n', encoding="utf-8")
    commit_all(repo, "move the skiplists")
    selection = tmp_path / "selection.json"
    assert select(repo, "--json", str(selection)).exit_code == 0
    assert json.loads(selection.read_text())["settings"]["table"] == {"skiplists": "skiplists"}

    # `export-bot report` in the tested checkout, as the workflow's report step runs it. By the
    # checkout's own pyproject it refuses: the folder it names does not exist.
    out = tmp_path / "out"
    here = os.getcwd()
    os.chdir(repo)
    try:
        runner = CliRunner()
        judged = runner.invoke(main, ["report", "--selection", str(selection), "--out", str(out)])
        unpinned = runner.invoke(main, ["report", "--out", str(tmp_path / "unpinned")])
    finally:
        os.chdir(here)
    assert judged.exit_code == 0, judged.output
    assert unpinned.exit_code == 2 and "elsewhere: the skiplist folder" in unpinned.output
    comment = (out / "comment.md").read_text(encoding="utf-8")
    assert '\n- \\[tool.export-bot\\] skiplists: "skiplists" → "elsewhere" — applies after the merge' in comment, (
        comment
    )
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["selection_notes"][0].startswith('[tool.export-bot] skiplists: "skiplists" → "elsewhere"')


def test_bad_settings_at_the_base_are_a_clear_error(repo):
    on_main(repo, '[tool.export-bot]\nbackends = ["tensorrt"]\n')
    # The PR fixes them; still the base's judge it, so the base must be fixed first.
    (repo / "pyproject.toml").write_text('[tool.export-bot]\nbackends = ["onnx"]\n', encoding="utf-8")
    commit_all(repo, "fix the settings")
    result = select(repo)
    assert result.exit_code == 2
    assert "pyproject.toml at the base" in result.output and "backends must be a list of backends" in result.output
    assert "Traceback" not in result.output


def test_a_head_pyproject_that_does_not_parse_is_listed_not_fatal(repo):
    (repo / "pyproject.toml").write_text("[tool.export-bot\n", encoding="utf-8")
    commit_all(repo, "broken")
    result = select(repo)
    assert result.exit_code == 0, result.output
    [edit] = json.loads(result.output)["settings_after_merge"]
    assert edit["key"] == "(unreadable)" and "not valid TOML" in edit["head"]


def test_check_with_a_base_is_judged_by_the_bases_settings_as_a_pr_is(repo, tmp_path):
    # The PR's own pyproject is one the bot refuses: the base's, fine, judge the local check too.
    (repo / "pyproject.toml").write_text("[tool.export-bot]\ncell-timeout = -1\n", encoding="utf-8")
    commit_all(repo, "a timeout the bot refuses")
    args = ["check", "--repo", str(repo), "--base", "main", "--head", "pr", "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "no export-relevant changes" in result.output
    refused = CliRunner().invoke(main, [*args, "--config", str(repo / "pyproject.toml")])
    assert refused.exit_code == 2 and "cell-timeout must be above 0" in refused.output
