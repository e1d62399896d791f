"""A push that makes every cell due: shared paths, skiplists and the toolchain (`select`'s `full=` and `due=`)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from bot.cli import main
from bot.jobs.select import select_job
from bot.select.due import bot_pins, sweep_reasons
from bot.settings import Settings
from tests.select.conftest import MODELS, commit_all, git

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


PIN_A, PIN_B = "a" * 40, "b" * 40


def caller(pin: str) -> str:
    return (
        "jobs:\n  baseline:\n"
        f"    uses: huggingface/export-bot/.github/workflows/baseline.yml@{pin} # main\n"
        f"    with:\n      bot-ref: {pin}\n"
    )


def test_a_new_bot_pin_in_the_caller_is_a_reason():
    wf = ".github/workflows/export-baseline.yml"
    assert sweep_reasons([wf], SETTINGS, pins={wf: (caller(PIN_A), caller(PIN_B))}) == (
        f"toolchain: {wf} pins export-bot aaaaaaaaaaaa → bbbbbbbbbbbb",
    )
    # The caller edited elsewhere (a cron, a comment): the same bot, nothing to re-measure.
    assert sweep_reasons([wf], SETTINGS, pins={wf: (caller(PIN_A), caller(PIN_A) + "# x\n")}) == ()
    # The caller added by this push pins a bot no result was measured with; removed, it pins none.
    assert sweep_reasons([wf], SETTINGS, pins={wf: (None, caller(PIN_B))})[0].endswith("nothing → bbbbbbbbbbbb")
    assert sweep_reasons([wf], SETTINGS, pins={wf: (caller(PIN_A), None)}) == ()


def test_the_pins_read_are_the_reusable_workflow_call_and_the_bot_ref():
    assert bot_pins(caller(PIN_A)) == {PIN_A}
    assert bot_pins(caller(PIN_A).replace(f"bot-ref: {PIN_A}", f"bot-ref: {PIN_B}")) == {PIN_A, PIN_B}
    assert bot_pins("      - uses: actions/checkout@" + PIN_B + "\n") == frozenset()
    assert bot_pins(None) == frozenset()


def test_a_push_of_a_shared_file_says_full_in_github_output(repo, tmp_path):
    (repo / "src/transformers/exporters/onnx.py").write_text('"""ONNX exporter."""\nCHANGED = True\n')
    commit_all(repo, "exporters")
    output = tmp_path / "github_output"
    args = ["select", "--repo", str(repo), "--base", "main", "--head", "pr", "--github-output", str(output)]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["full_sweep_due"] == ["shared: src/transformers/exporters/onnx.py"]
    lines = output.read_text().splitlines()
    assert "full=true" in lines and "due=shared: src/transformers/exporters/onnx.py" in lines
    assert json.loads(result.output)["cells"], "the push still runs its own selection (the core preset)"


def test_a_skiplist_change_and_a_new_bot_pin_on_one_push(repo, tmp_path):
    wf = repo / ".github" / "workflows" / "export-baseline.yml"
    wf.parent.mkdir(parents=True)
    wf.write_text(caller(PIN_A))
    commit_all(repo, "the caller")
    base = git(repo, "rev-parse", "HEAD").strip()
    skips = repo / "skiplists" / "export_skips.toml"
    skips.write_text(skips.read_text() + "\n")
    wf.write_text(caller(PIN_B))
    commit_all(repo, "skiplist and a new bot")
    output = tmp_path / "github_output"
    pin_file = ".github/workflows/export-baseline.yml"
    document = select_job(repo, base, "pr", SETTINGS, github_output=output, pin_file=pin_file)
    reasons = [
        "skiplists: skiplists/export_skips.toml",
        f"toolchain: {pin_file} pins export-bot aaaaaaaaaaaa → bbbbbbbbbbbb",
    ]
    assert document["full_sweep_due"] == reasons
    assert "due=" + "; ".join(reasons) in output.read_text().splitlines()


def test_a_docs_push_is_not_full(repo, tmp_path):
    (repo / "docs/source/en/export.md").write_text("# changed\n")
    commit_all(repo, "docs")
    output = tmp_path / "github_output"
    select_job(repo, "main", "pr", SETTINGS, github_output=output, pin_file=".github/workflows/export-baseline.yml")
    assert output.read_text().splitlines()[-2:] == ["full=false", "due="]


def test_a_push_changing_only_a_shared_files_docstring_is_not_full(repo, tmp_path):
    (repo / "src/transformers/exporters/onnx.py").write_text('"""The ONNX exporter, documented anew."""\n')
    commit_all(repo, "exporters: a docstring")
    output = tmp_path / "github_output"
    document = select_job(repo, "main", "pr", SETTINGS, github_output=output)
    assert document["cells"] == [] and document["unchanged_code"] == ["src/transformers/exporters/onnx.py"]
    assert output.read_text().splitlines()[-2:] == ["full=false", "due="]


def test_a_settings_change_names_its_keys():
    assert sweep_reasons([], SETTINGS, settings_keys=["backends", "drift_atol", "backends"]) == (
        "settings: backends, drift-atol in [tool.export-bot]",
    )
    assert sweep_reasons(["pyproject.toml"], SETTINGS, settings_keys=[]) == ()


def test_a_push_widening_backends_makes_a_full_sweep_due(repo, tmp_path):
    pyproject = repo / "pyproject.toml"
    pyproject.write_text('[project]\nname = "t"\n\n[tool.export-bot]\nbackends = ["onnx"]\n')
    commit_all(repo, "gate on onnx")
    before = git(repo, "rev-parse", "HEAD").strip()
    pyproject.write_text('[project]\nname = "t"\n\n[tool.export-bot]\nbackends = ["onnx", "dynamo"]\n')
    commit_all(repo, "gate on dynamo too")
    output = tmp_path / "github_output"
    document = select_job(repo, before, "pr", None, github_output=output)
    # Judged by the settings before it, the push runs no cell: the sweep measures the newly gated ones.
    assert document["cells"] == []
    assert document["full_sweep_due"] == ["settings: backends in [tool.export-bot]"]
    assert output.read_text().splitlines()[-2:] == ["full=true", "due=settings: backends in [tool.export-bot]"]
    # A pyproject edit outside the table (a dependency) judges nothing differently.
    pyproject.write_text(pyproject.read_text().replace('name = "t"', 'name = "t"\nversion = "2"'))
    commit_all(repo, "a version")
    output.unlink()
    select_job(repo, "pr~1", "pr", None, github_output=output)
    assert output.read_text().splitlines()[-2:] == ["full=false", "due="]
