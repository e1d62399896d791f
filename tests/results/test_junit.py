"""The JUnit reader: runner output, plain pytest output, and every broken input as a Problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cells import Cell
from bot.outcomes import Status
from bot.results import read_results
from tests.results.factory import Case, junit

BERT_ONNX = "BertModel::test_onnx_export_dynamic"
BERT_TORCH = "BertModel::test_torch_export_static"
GPT2_ET = "GPT2LMHeadModel::test_executorch_export_generate_dynamic_xnnpack"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_reads_every_outcome_and_its_properties(tmp_path):
    cases = [
        Case(BERT_TORCH),
        Case("BertModel::test_onnx_export_static", "uncompared", exactness="onnx.exactness"),
        Case(BERT_ONNX, "failed", "RuntimeError: boom", "Traceback …\nRuntimeError: boom", stage="export"),
        Case(GPT2_ET, "error", "worker crashed", kind="crash"),
        Case("ViTModel::test_openvino_export_static", "skipped", "flaky on CI", skip_scope="openvino"),
        Case("ViTModel::test_onnx_export_static", "passed", probe=True, skip_scope="onnx"),
    ]
    path = write(tmp_path, "shard.xml", junit(cases, shard="1/2", versions={"torch": "2.13.0", "onnx": "1.20"}))
    results = read_results([path])
    assert results.problems == ()
    by_id = {cell.id: r for cell, r in results.results.items()}
    assert by_id[BERT_TORCH].status is Status.PASSED and by_id[BERT_TORCH].duration == 1.5
    assert by_id["BertModel::test_onnx_export_static"].status is Status.PASSED_UNCOMPARED
    assert by_id["BertModel::test_onnx_export_static"].exactness_scope == "onnx.exactness"
    failed = by_id[BERT_ONNX]
    assert (failed.status, failed.stage, failed.message) == (Status.FAILED, "export", "RuntimeError: boom")
    assert failed.details.endswith("RuntimeError: boom") and failed.source == str(path)
    assert (by_id[GPT2_ET].status, by_id[GPT2_ET].kind, by_id[GPT2_ET].infrastructure) == (Status.ERROR, "crash", True)
    skipped = by_id["ViTModel::test_openvino_export_static"]
    assert (skipped.status, skipped.skip_scope, skipped.message) == (Status.SKIPPED, "openvino", "flaky on CI")
    assert by_id["ViTModel::test_onnx_export_static"].probe
    assert results.shards == ("1/2",) and results.git_sha == "abc123"
    assert results.versions == {"torch": "2.13.0", "onnx": "1.20"}


def test_plain_pytest_junit_from_other_producers(tmp_path):
    text = """<?xml version="1.0"?>
<testsuites>
 <testsuite name="pytest" errors="0">
  <testcase classname="tests.exporters.test_export.BertModelTest" name="test_onnx_export_static"/>
  <testcase classname="BertModel" name="test_torch_export_dynamic"/>
 </testsuite>
 <testsuite name="second">
  <testcase classname="LlamaForCausalLM" name="test_torch_export_generate_static_static_cache">
   <skipped type="pytest.skip" message="torch too old">tests/x.py:3: torch too old</skipped>
  </testcase>
  <testcase classname="BertModel" name="test_something_else"><error message="fixture broke"/></testcase>
 </testsuite>
</testsuites>"""
    results = read_results([write(tmp_path, "pytest.xml", text)])
    assert results.problems == ()
    assert set(results.non_cells) == {
        "tests.exporters.test_export.BertModelTest::test_onnx_export_static",
        "BertModel::test_something_else",
    }
    assert {c.id for c in results.results} == {
        "BertModel::test_torch_export_dynamic",
        "LlamaForCausalLM::test_torch_export_generate_static_static_cache",
    }
    assert len(results.suites) == 2 and results.versions == {} and results.git_sha is None


def test_versions_in_every_spelling(tmp_path):
    props = (
        '<property name="version.torch" value="2.13.0"/><property name="onnx" value="1.20"/>'
        '<property name="openvino_version" value="2026.1"/>'
    )
    text = f"<testsuite><properties>{props}</properties></testsuite>"
    assert read_results([write(tmp_path, "v.xml", text)]).versions == {
        "torch": "2.13.0",
        "onnx": "1.20",
        "openvino": "2026.1",
    }


def test_plain_pytest_error_is_a_harness_error(tmp_path):
    text = '<testsuite><testcase classname="BertModel" name="test_onnx_export_static"><error message="x"/></testcase></testsuite>'
    result = read_results([write(tmp_path, "e.xml", text)]).results[Cell.parse("BertModel::test_onnx_export_static")]
    assert (result.status, result.kind) == (Status.ERROR, "harness")


def test_truncated_file_is_a_problem_and_keeps_the_cases_before_it(tmp_path):
    text = junit([Case(BERT_TORCH), Case(BERT_ONNX, "failed", "E: x", "tb")])
    path = write(tmp_path, "cut.xml", text[: text.index(BERT_ONNX.split("::")[1]) + 10])
    results = read_results([path])
    [problem] = results.problems
    assert problem.file == str(path) and problem.line and "truncated or malformed XML" in problem.what
    assert "re-run" in problem.todo
    assert [c.id for c in results.results] == [BERT_TORCH]


def test_empty_file_is_a_problem(tmp_path):
    [problem] = read_results([write(tmp_path, "empty.xml", "  \n")]).problems
    assert "empty file" in problem.what


def test_non_junit_xml_is_a_problem(tmp_path):
    [problem] = read_results([write(tmp_path, "pom.xml", "<project><testcase/></project>")]).problems
    assert "not JUnit XML" in problem.what and "<project>" in problem.what


def test_missing_file_and_garbage_are_problems_not_exceptions(tmp_path):
    garbage = tmp_path / "bin.xml"
    garbage.write_bytes(b"\x00\xff\xfe garbage")
    results = read_results([tmp_path / "nope.xml", garbage])
    assert len(results.problems) == 2 and results.results == {}


@pytest.mark.parametrize("failing_first", [False, True])
def test_same_cell_in_two_files_keeps_the_failing_result_and_names_both(tmp_path, failing_first):
    """A duplicate is a problem and a duplicate; whichever file the failure is in, it is what the cell did."""
    cases = [junit([Case(BERT_TORCH)], shard="1/2"), junit([Case(BERT_TORCH, "failed", "E: x")], shard="2/2")]
    first, second = (
        write(tmp_path, name, text) for name, text in zip(("a.xml", "b.xml"), cases[:: -1 if failing_first else 1])
    )
    results = read_results([first, second], expect_shards=2)
    [problem] = results.problems
    assert problem.file == str(second) and str(first) in problem.what and BERT_TORCH in problem.what
    assert results.duplicates == (Cell.parse(BERT_TORCH),)
    assert results.results[Cell.parse(BERT_TORCH)].status is Status.FAILED
    assert ("failure is never hidden" in problem.what) is not failing_first


def test_same_cell_twice_both_passing_keeps_the_first(tmp_path):
    first = write(tmp_path, "a.xml", junit([Case(BERT_TORCH, time="1.0")]))
    second = write(tmp_path, "b.xml", junit([Case(BERT_TORCH, time="9.0")]))
    results = read_results([first, second])
    assert results.results[Cell.parse(BERT_TORCH)].source == str(first) and "the first result is kept" in str(
        results.problems[0]
    )


def test_expected_shard_missing_is_named(tmp_path):
    files = [
        write(tmp_path, f"{i}.xml", junit([Case(c)], shard=f"{i}/3")) for i, c in ((1, BERT_TORCH), (3, BERT_ONNX))
    ]
    [problem] = read_results(files, expect_shards=3).problems
    assert "shard 2/3 is missing" in problem.what


def test_expected_shards_without_shard_properties_count_files(tmp_path):
    path = write(tmp_path, "only.xml", junit([Case(BERT_TORCH)]))
    [problem] = read_results([path], expect_shards=2).problems
    assert "expected 2 shard files, read 1" in problem.what
    assert read_results([path], expect_shards=1).problems == ()


def test_a_folder_reads_every_xml_inside(tmp_path):
    (tmp_path / "shard-1").mkdir()
    write(tmp_path / "shard-1", "junit.xml", junit([Case(BERT_TORCH)], shard="1/2"))
    write(tmp_path, "junit-2.xml", junit([Case(BERT_ONNX)], shard="2/2"))
    results = read_results([tmp_path], expect_shards=2)
    assert results.problems == () and len(results.results) == 2 and results.shards == ("1/2", "2/2")


def test_fast_construction_matches_the_dataclass_constructor():
    from dataclasses import fields

    from bot.outcomes import CellResult
    from bot.results.convert import build_result as _build

    # `_build` skips CellResult.__init__; it is only right while CellResult has no __post_init__.
    assert not hasattr(CellResult, "__post_init__")
    values = {"cell": Cell.parse(BERT_ONNX), "status": Status.FAILED, "stage": "run", "message": "E: x", "probe": True}
    built, made = _build(**values), CellResult(**values)
    assert built == made and all(getattr(built, f.name) == getattr(made, f.name) for f in fields(CellResult))


def test_cells_read_are_the_cells_the_grammar_parses():
    from bot.cells import cells_for
    from bot.results.convert import cell_of as _cell

    for cell in cells_for("LlamaForCausalLM", generative=True, targets=("xnnpack", "mlx")):
        made = _cell(cell.model_class, cell.name)
        assert made == cell and hash(made) == hash(cell) and made.id == cell.id
    assert _cell("tests.models.BertTest", "test_onnx_export_static") is None
    assert _cell("Bért", "test_onnx_export_static") is None and _cell("", "test_onnx_export_static") is None
    # A name no grammar places is read by its name; only a testcase the checkout's test judged keeps it a cell
    # (bot/results/merge.py), so another tool's JUnit cannot add cells this way.
    kept = _cell("BertModel", "test_onnx_export_generate_static_static_cache_mlx")
    assert kept.test == "test_onnx_export_generate_static_static_cache_mlx" and kept.backend == ""


def test_reads_a_file_the_bots_runner_wrote():
    # Written by `bot.run` (pytest + the plugin) on the misbehaving fixture checkout: a hung
    # cell, a class the source cannot build, and a skiplisted cell, as shard 1/1.
    path = Path(__file__).parent / "data" / "runner_sample.xml"
    results = read_results([path], expect_shards=1)
    assert results.problems == () and results.non_cells == ()
    by_id = {cell.id: r for cell, r in results.results.items()}
    ghost = by_id["GhostModel::test_torch_export_static"]
    assert (ghost.status, ghost.kind, ghost.stage) == (Status.ERROR, "build", "build")
    assert ghost.message.startswith("BuildError: ")
    skipped = by_id["TinyModel::test_torch_export_static"]
    assert (skipped.status, skipped.skip_scope, skipped.probe) == (Status.SKIPPED, "dynamo.static", False)
    hung = by_id["HangingModel::test_torch_export_static"]
    assert hung.status.failing and hung.stage == "eager" and "Traceback" in hung.details
    assert dict(hung.properties)["time.eager"]
    assert results.versions["torch"].startswith("2.13.0") and results.shards == ("1/1",)
    assert results.git_sha and len(results.git_sha) == 40


def test_cells_read_from_names_carry_their_own_ids_and_equal_parsed_cells():
    from bot.results.convert import cell_of

    for name in ("test_onnx_export_dynamic", "test_executorch_export_generate_static_static_cache_xnnpack"):
        first, second = cell_of("BertModel", name), cell_of("LlamaModel", name)  # one cached variant
        assert (first.id, first.name) == (f"BertModel::{name}", name)
        assert (second.id, second.name) == (f"LlamaModel::{name}", name)
        parsed = Cell.parse(f"BertModel::{name}")
        assert first == parsed and hash(first) == hash(parsed) and {parsed: 1}[first] == 1
        assert vars(first).keys() >= {"model_class", "backend", "shape", "path", "cache", "target"}


def test_odd_but_valid_shapes_read_as_the_document_says(tmp_path):
    from bot.results.junit import read_file

    text = """<testsuites><properties><property name="stray" value="1"/></properties>
<testsuite name="outer"><testcase classname="A" name="test_onnx_export_static">
  <failure message="E: boom">first<b>inner</b>last</failure><error message="teardown">later</error>
  <properties><property name="stage">export</property><property name="kind" value="k"/></properties>
 </testcase>
 <properties><property name="shard" value="1/2"/></properties>
 <testsuite name="inner"><testcase classname="B" name="test_onnx_export_static"><skipped message="s"/></testcase></testsuite>
</testsuite></testsuites>"""
    read = read_file(write(tmp_path, "odd.xml", text))
    assert read.problems == []
    first, second = read.cases
    # The failure outranks the teardown error; its whole text is the traceback; a property may hold its value as text.
    assert (first.outcome, first.message, first.details, first.stage) == (
        "failure",
        "E: boom",
        "firstinnerlast",
        "export",
    )
    assert (second.outcome, second.message) == ("skipped", "s")
    # Suites in document order, each counting its own testcases; suite properties may follow the cases.
    assert [(s.name, s.testcases, s.shard) for s in read.suites] == [("outer", 1, "1/2"), ("inner", 1, None)]


def test_a_truncated_file_keeps_its_open_suite(tmp_path):
    from bot.results.junit import read_file

    text = junit([Case(BERT_TORCH), Case(BERT_ONNX)], shard="2/4")
    read = read_file(write(tmp_path, "cut.xml", text[: text.index("</testsuite>")]))
    assert [c.name for c in read.cases] == ["test_torch_export_static", "test_onnx_export_dynamic"]
    assert [(s.shard, s.testcases) for s in read.suites] == [("2/4", 2)]
    [problem] = read.problems
    assert "truncated" in problem.what and "the 2 testcases before it are kept" in problem.what


def test_a_root_that_is_not_junit_stops_at_once(tmp_path):
    from bot.results.junit import read_file

    for root in ("<property name='a' value='b'/>", "<testcase classname='A' name='test_onnx_export_static'/>"):
        read = read_file(write(tmp_path, "x.xml", root))
        assert read.cases == [] and len(read.problems) == 1 and "not JUnit XML" in read.problems[0].what


def test_whitespace_only_file_is_empty(tmp_path):
    [problem] = read_results([write(tmp_path, "blank.xml", "  \n\t\n")]).problems
    assert problem.what == "empty file: no JUnit XML in it"


def test_a_typed_skip_or_the_property_reads_as_not_buildable(tmp_path):
    prop = '<properties><property name="not_buildable" value="true"/></properties>'
    text = f"""<testsuite>
 <testcase classname="GhostModel" name="test_onnx_export_static">
  <skipped type="not-buildable" message="the zoo has no recipe for GhostModel"/>
 </testcase>
 <testcase classname="GhostModel" name="test_onnx_export_dynamic">{prop}
  <skipped type="pytest.skip" message="no tester lists GhostModel"/>
 </testcase>
 <testcase classname="BertModel" name="test_onnx_export_static"><skipped type="pytest.skip" message="x"/></testcase>
</testsuite>"""
    results = read_results([write(tmp_path, "nb.xml", text)]).results
    typed = results[Cell.parse("GhostModel::test_onnx_export_static")]
    assert (typed.status, typed.message) == (Status.NOT_BUILDABLE, "the zoo has no recipe for GhostModel")
    flagged = results[Cell.parse("GhostModel::test_onnx_export_dynamic")]
    assert flagged.status is Status.NOT_BUILDABLE and "not_buildable" not in dict(flagged.properties)
    assert results[Cell.parse("BertModel::test_onnx_export_static")].status is Status.SKIPPED


def test_provenance_of_the_transformers_tested_and_shards_that_disagree(tmp_path):
    def shard(index: int, location: str, sha: str | None) -> Path:
        props = (
            f'<property name="shard" value="{index}/2"/><property name="version.transformers" value="5.24.0.dev0"/>'
            f'<property name="transformers.location" value="{location}"/>'
            + (f'<property name="transformers.sha" value="{sha}"/>' if sha else "")
        )
        return write(tmp_path, f"s{index}.xml", f"<testsuite><properties>{props}</properties></testsuite>")

    same = read_results([shard(1, "/src/transformers", "abc"), shard(2, "/src/transformers", "abc")])
    assert same.provenance.to_json() == {
        "transformers_version": "5.24.0.dev0",
        "transformers_location": "/src/transformers",
        "transformers_sha": "abc",
        "shards_disagree": [],
    }
    mixed = read_results([shard(1, "/src/transformers", "abc"), shard(2, "/venv/transformers", None)]).provenance
    assert mixed.transformers_location == "/src/transformers / /venv/transformers"
    assert mixed.disagree == ("transformers_location",) and mixed.transformers_sha == "abc"
    assert not read_results([]).provenance.known


def test_markup_characters_in_attributes_read_back_as_written(tmp_path):
    # Found by tests/test_fuzz.py: with no entity resolved, libxml2 gave `&amp;` back as `&#38;`.
    message = "AssertionError: a && b < c > d \"q\" 'r' &#38;"
    cases = [Case(BERT_ONNX, "failed", message, stage="export", extra={"note": "x & y"})]
    [result] = read_results([write(tmp_path, "a.xml", junit(cases))]).results.values()
    assert result.message == message and dict(result.properties)["note"] == "x & y"


def test_external_entities_are_never_resolved(tmp_path):
    secret = write(tmp_path, "secret.txt", "do not read")
    path = write(
        tmp_path,
        "xxe.xml",
        f'<?xml version="1.0"?><!DOCTYPE t [<!ENTITY x SYSTEM "file://{secret}">]>'
        f'<testsuites><testsuite><testcase classname="BertModel" name="test_onnx_export_dynamic">'
        f'<failure message="&x;">&x;</failure></testcase></testsuite></testsuites>',
    )
    results = read_results([path])
    assert "do not read" not in repr(results)
