"""`export-bot skiplist lint|explain|import`: one clear line per problem, the right exit codes, never a traceback."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from bot.cli import main
from bot.models.index import installed_index
from tests.conftest import SKIPLISTS

NEEDS_TRANSFORMERS = pytest.mark.skipif(
    not installed_index().classes, reason="the light install has no Transformers to name classes"
)

DATA = SKIPLISTS.parents[0] / "tests" / "data" / "upstream"


def run(*args: str):
    result = CliRunner().invoke(main, ["skiplist", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def test_shipped_skiplists_pass_strict_lint():
    result = run("lint", "--strict", str(SKIPLISTS))
    assert result.exit_code == 0, result.output
    assert f"{SKIPLISTS}/export_skips.toml: 173 entries in 17 scopes" in result.output
    assert f"{SKIPLISTS}/onnx_disable_optimize.toml: 46 entries in 2 scopes" in result.output
    assert "error" not in result.output and "warning" not in result.output
    # The seed's two shadowed entries stay verbatim, each with a cause of its own: notes, not warnings.
    assert "`VibeVoiceForConditionalGeneration` in `generate.dynamic` is shadowed: `generate`" in result.output
    assert "`HieraForPreTraining` in `openvino.dynamic` is shadowed: `dynamic`" in result.output


@pytest.mark.parametrize(
    "text, line, exit_code",
    [
        ('[all]\nBertModel = "a\n', "bad.toml:2:15: error: TOML syntax error: Illegal character", 2),
        (
            '[all]\nBertModel = "a"\nBertModel = "b"\n',
            "bad.toml:3:1: error: duplicate class `BertModel` in `all` (first at line 2)",
            2,
        ),
        (
            "[all]\nBertModel = 3\n",
            "bad.toml:2:13: error: the reason of `BertModel` in `all` must be a string, not a number",
            2,
        ),
        ('[all]\nBertModel = ""\n', "bad.toml:2:13: error: empty reason for `BertModel` in `all`", 2),
        ('BertModel = "a"\n', "bad.toml:1:1: error: `BertModel` is neither a reason nor a scope table", 2),
        ('[onnx.dynamc]\nBertModel = "a"\n', "bad.toml:1:2: warning: unknown scope `onnx.dynamc`", 0),
        (
            '[all]\nBertModel = "Same as `Nope`."\n',
            "bad.toml:2:13: warning: the reason of `BertModel` refers to `Nope`",
            0,
        ),
        pytest.param(
            '[all]\nBertModle = "a"\n',
            "bad.toml:2:1: warning: `BertModle` is not a model class of the installed Transformers "
            "(no modeling module exports it); did you mean `BertModel`?",
            0,
            marks=NEEDS_TRANSFORMERS,
        ),
        pytest.param(  # no known name is that close: a class of another version, said and no failure
            '[all]\nQuuxForTeleportation = "a"\n',
            "bad.toml:2:1: note: `QuuxForTeleportation` is not a model class of the installed Transformers",
            0,
            marks=NEEDS_TRANSFORMERS,
        ),
        (
            '[dynamic]\nBertModel = "a"\n["onnx.dynamic"]\nBertModel = "a"\n',
            "bad.toml:4:1: warning: `BertModel` in `onnx.dynamic` is redundant: `dynamic` (line 2) already covers"
            " all its cells, for the same reason",
            0,
        ),
        (  # its own reason: a second cause, kept as upstream keeps two
            '[dynamic]\nBertModel = "a"\n["onnx.dynamic"]\nBertModel = "b"\n',
            "bad.toml:4:1: note: `BertModel` in `onnx.dynamic` is shadowed: `dynamic` (line 2)",
            0,
        ),
    ],
)
def test_lint_findings(tmp_path, text, line, exit_code):
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path)
        result = run("lint", "bad.toml")
    said = (": error: ", ": warning: ", ": note: ")
    findings = [line_ for line_ in result.output.splitlines() if any(severity in line_ for severity in said)]
    assert findings == [next(f for f in findings if f.startswith(line))] and len(findings) == 1, result.output
    assert result.exit_code == exit_code
    if exit_code == 0:  # `--strict` fails on a warning, never on a note
        assert run("lint", "--strict", str(path)).exit_code == (1 if ": warning: " in line else 0)


def test_lint_toggle_file_knows_only_its_two_scopes(tmp_path):
    path = tmp_path / "onnx_disable_optimize.toml"
    path.write_text('[static]\nBertModel = "a"\n', encoding="utf-8")
    assert "only `all` and `dynamic`" in run("lint", str(path)).output


def test_lint_bad_paths_are_usage_errors(tmp_path):
    assert run("lint", str(tmp_path / "missing.toml")).exit_code == 2
    assert run("lint", str(tmp_path)).exit_code == 2
    (tmp_path / "latin.toml").write_bytes(b'[all]\nA = "\xe9"\n')
    result = run("lint", str(tmp_path / "latin.toml"))
    assert result.exit_code == 2 and "not UTF-8" in result.output


def test_explain_the_issues_examples():
    result = run(
        "explain",
        "MMGroundingDinoModel::test_onnx_export_dynamic",
        "VibeVoiceAsrModel::test_onnx_export_static",
        "BertModel::test_torch_export_static",
        "MiniMaxM3SparseForConditionalGeneration::test_openvino_export_generate_static_static_cache",
    )
    assert result.exit_code == 0
    mm, vibe, bert, minimax = result.output.split("\n\n")
    assert "skipped by scope `onnx.dynamic`: Same as `GroundingDinoModel`." in mm
    assert "`GroundingDinoModel` in `onnx.dynamic`: Same `detach_(alias(...))` retrace bug" in mm
    assert "runs, with the comparison against eager dropped by `exactness`" in vibe
    assert "runs: no skiplist entry applies" in bert
    assert "static-cache → openvino" in minimax and "skipped by scope `openvino.static-cache`" in minimax
    assert "_can_compile_fullgraph` is False" in minimax


def test_explain_json_one_object_per_cell(tmp_path):
    shutil.copy(SKIPLISTS / "export_skips.toml", tmp_path)
    (tmp_path / "onnx_disable_optimize.toml").write_text('[dynamic]\nBertModel = "x"\n', encoding="utf-8")
    result = run(
        "explain",
        "--json",
        "--skiplists",
        str(tmp_path),
        "BertModel::test_onnx_export_dynamic",
        "VibeVoiceAsrModel::test_torch_export_static",
    )
    bert, vibe = json.loads(result.output)
    assert {k: bert[k] for k in ("skipped", "scope", "reason", "exactness_scope", "onnx_optimize")} == {
        "skipped": False,
        "scope": None,
        "reason": None,
        "exactness_scope": None,
        "onnx_optimize": False,
    }
    assert (vibe["exactness_scope"], vibe["onnx_optimize"]) == ("exactness", None)


@pytest.mark.parametrize(
    "cell_id, part",
    [
        ("BertModel", "`::`"),
        ("BertModel::test_onnx_export_sideways", "sideways"),
        ("BertModel::test_tflite_export_static", "tflite"),
    ],
)
def test_explain_malformed_id(cell_id, part):
    result = run("explain", "BertModel::test_onnx_export_static", cell_id)
    assert result.exit_code == 2 and part in result.output and "Traceback" not in result.output


def test_explain_broken_skiplist_is_a_usage_error(tmp_path):
    (tmp_path / "export_skips.toml").write_text('[all]\nA = "a\n', encoding="utf-8")
    result = run("explain", "--skiplists", str(tmp_path), "A::test_onnx_export_static")
    assert result.exit_code == 2 and "export_skips.toml" in result.output


@pytest.mark.parametrize(
    "name, toml", [("EXPORT_SKIPS", "export_skips.toml"), ("ONNX_DISABLE_OPTIMIZE", "onnx_disable_optimize.toml")]
)
def test_import_reproduces_the_shipped_files(tmp_path, name, toml):
    out = tmp_path / toml
    result = run("import", str(DATA / "test_export_skips.py"), "--name", name, "-o", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == (SKIPLISTS / toml).read_bytes()
    assert run("import", str(DATA / "test_export_skips.py"), "--name", name).output == (SKIPLISTS / toml).read_text(
        "utf-8"
    )


def test_import_errors_name_the_problem(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("X = {'all': {'A': f'{1}'}}\n", encoding="utf-8")
    result = run("import", str(source), "--name", "X")
    assert result.exit_code == 2 and "m.py:1:" in result.output and "string literal" in result.output
    assert "no module-level assignment to 'EXPORT_SKIPS'" in run("import", str(source), "--name", "EXPORT_SKIPS").output
    every = run("import", str(source))
    assert every.exit_code == 2 and "no skip table could be imported (X not imported: " in every.output


def test_names_are_reasons_only_outside_the_two_named_files(tmp_path):
    # `skiplist import` writes a table whose values are names (EXECUTORCH_PARTITION_EXCLUDE) as arrays.
    (tmp_path / "executorch_partition_exclude.toml").write_text('[all]\nBertModel = ["ViewCopyConfig"]\n')
    assert run("lint", str(tmp_path / "executorch_partition_exclude.toml")).exit_code == 0
    (tmp_path / "export_skips.toml").write_text('[all]\nBertModel = ["a"]\n')
    result = run("lint", str(tmp_path / "export_skips.toml"))
    assert result.exit_code == 2
    assert "export_skips.toml:2:13: error: the reason of `BertModel` in `all` must be a string, not an array" in (
        result.output
    )
