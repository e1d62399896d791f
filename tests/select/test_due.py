"""A push that makes every cell due: shared paths, skiplists and the toolchain (`select`'s `full=` and `due=`)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from bot.cli import main
from bot.jobs.select import select_job
from bot.select.due import sweep_reasons
from bot.settings import Settings
from tests.select.conftest import MODELS, commit_all

SETTINGS = Settings()


def test_a_model_file_alone_is_not_a_reason():
    assert sweep_reasons([f"{MODELS}/gpt2/modeling_gpt2.py", "docs/source/en/export.md"], SETTINGS) == ()


def test_shared_paths_and_skiplists_are_reasons_each_named_once():
    paths = [
        "src/transformers/modeling_utils.py",
        "src/transformers/cache_utils.py",
        "skiplists/export_skips.toml",
        "src/transformers/modeling_utils.py",
    ]
    assert sweep_reasons(paths, SETTINGS) == (
        "shared: src/transformers/modeling_utils.py and 1 more",
        "skiplists: skiplists/export_skips.toml",
    )


def test_the_configured_paths_decide():
    settings = Settings(shared_paths=("src/transformers/pytorch_utils.py",), skiplist_paths=("lists/*.toml",))
    assert sweep_reasons(["src/transformers/modeling_utils.py", "skiplists/export_skips.toml"], settings) == ()
    assert sweep_reasons(["lists/a.toml"], settings) == ("skiplists: lists/a.toml",)


def test_a_toolchain_is_a_reason_only_when_both_are_known_and_differ():
    new, old = "b" * 64, "a" * 64
    assert sweep_reasons([], SETTINGS, toolchain=new, recorded=old) == ("toolchain: aaaaaaaaaaaa → bbbbbbbbbbbb",)
    assert sweep_reasons([], SETTINGS, toolchain=new, recorded=new) == ()
    # Nothing recorded yet (no full sweep since): the missing sweep is the reason, said by `baseline due`.
    assert sweep_reasons([], SETTINGS, toolchain=new, recorded=None) == ()
    assert sweep_reasons([], SETTINGS, toolchain=None, recorded=old) == ()


def test_a_push_of_a_shared_file_says_full_in_github_output(repo, tmp_path):
    (repo / "src/transformers/exporters/onnx.py").write_text('"""ONNX exporter, changed."""\n')
    commit_all(repo, "exporters")
    output = tmp_path / "github_output"
    args = ["select", "--repo", str(repo), "--base", "main", "--head", "pr", "--github-output", str(output)]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["full_sweep_due"] == ["shared: src/transformers/exporters/onnx.py"]
    lines = output.read_text().splitlines()
    assert "full=true" in lines and "due=shared: src/transformers/exporters/onnx.py" in lines
    assert json.loads(result.output)["cells"], "the push still runs its own selection (the core preset)"


def test_a_toolchain_change_and_a_skiplist_change_on_one_push(repo, tmp_path):
    skips = repo / "skiplists" / "export_skips.toml"
    skips.write_text(skips.read_text() + "\n")
    commit_all(repo, "skiplist")
    output = tmp_path / "github_output"
    document = select_job(
        repo, "main", "pr", SETTINGS, github_output=output, toolchain="c" * 64, recorded_toolchain="d" * 64
    )
    assert document["full_sweep_due"] == [
        "skiplists: skiplists/export_skips.toml",
        "toolchain: dddddddddddd → cccccccccccc",
    ]
    assert "due=skiplists: skiplists/export_skips.toml; toolchain: dddddddddddd → cccccccccccc" in (
        output.read_text().splitlines()
    )


def test_a_docs_push_is_not_full(repo, tmp_path):
    (repo / "docs/source/en/export.md").write_text("# changed\n")
    commit_all(repo, "docs")
    output = tmp_path / "github_output"
    select_job(repo, "main", "pr", SETTINGS, github_output=output, toolchain="c" * 64, recorded_toolchain="c" * 64)
    assert output.read_text().splitlines()[-2:] == ["full=false", "due="]
