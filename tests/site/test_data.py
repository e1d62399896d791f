"""The dashboard's data: marks, per-run changes, pass rates, skip lines, ordering, and the command's errors."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli import main
from bot.diff.model import CellLine, Report, write_report
from bot.report.markdown import mark
from bot.site import NightlyReport, build_data, find_reports
from bot.site.data import CODES, code
from bot.site.skips import read_skip_lines, skip_lines

ROOT = Path(__file__).resolve().parents[2]
A, B = "BertModel::test_onnx_export_static", "BertModel::test_torch_export_dynamic"
G = "LlamaForCausalLM::test_executorch_export_generate_dynamic_static_cache_xnnpack"


def report(*lines: CellLine, created: str | None = None, sha: str = "a" * 40, flaky=()) -> Report:
    return Report(
        verdict="success",
        headline="",
        baseline=False,
        cells=tuple(lines),
        created=created,
        head_sha=sha,
        categories={"flaky": tuple(x for x in lines if x.cell in flaky)},
    )


def decode(data: dict) -> list[list[int]]:
    """Each run's state per cell, decoded the way app.js decodes it."""
    out, current = [], [0] * len(data["cell_class"])
    for run in data["runs"]:
        if "full" in run:
            current = list(run["full"])
        else:
            current = list(current)
            pairs = run["changes"]
            for i in range(0, len(pairs), 2):
                current[pairs[i]] = pairs[i + 1]
        out.append(current)
    return out


def test_marks_follow_the_comment():
    assert code(CellLine(A, "passed")) == "P"
    assert code(CellLine(A, "passed-uncompared")) == "U"
    assert code(CellLine(A, "failed", stage="export")) == "F"
    assert code(CellLine(A, "error", kind="crash")) == "X"
    assert code(CellLine(A, "error", kind="harness")) == "H"
    assert code(CellLine(A, "failed"), flaky=True) == "K"
    assert code(CellLine(A, "skipped", skip_scope="onnx")) == "S"
    # Probe runs of skiplisted cells: a pass hints at an obsolete skip, a failure is the skip still needed.
    assert code(CellLine(A, "passed", probe=True)) == "O"
    assert code(CellLine(A, "failed", probe=True)) == "S"
    assert code(CellLine(A, "missing")) == "-"
    # A weak pass (output names or count only, or nothing) and a class the source cannot build.
    assert code(CellLine(A, "passed", compared="names")) == "W"
    assert code(CellLine(A, "passed", compared="count")) == "W"
    assert code(CellLine(A, "passed", compared="none")) == "W"
    assert code(CellLine(A, "not-buildable", message="no zoo recipe builds it")) == "B"
    assert code(CellLine(A, "not-buildable", probe=True)) == "B"  # no verdict, not a skip still needed


def test_every_mark_is_the_comments_mark():
    lines = [
        CellLine(A, "passed"),
        CellLine(A, "passed", compared="names"),
        CellLine(A, "passed", compared="count"),
        CellLine(A, "passed-uncompared", exactness_scope="onnx"),
        CellLine(A, "failed", stage="export"),
        CellLine(A, "error", kind="crash"),
        CellLine(A, "error", kind="timeout"),
        CellLine(A, "error", kind="build"),
        CellLine(A, "skipped", skip_scope="onnx"),
        CellLine(A, "not-buildable"),
    ]
    for line in lines:
        assert CODES[code(line)][1] == mark(line), line
    assert CODES[code(CellLine(A, "failed"), flaky=True)][1] == mark(CellLine(A, "failed"), flaky=True)
    assert len({mark for _, mark in CODES.values()}) >= len(CODES) - 2  # only U (✅) and K (⚠️) share a mark


def test_weak_passes_and_not_buildable_cells_have_their_own_codes():
    E = "BertModel::test_executorch_export_static_xnnpack"
    lines = [
        CellLine(A, "passed", compared="names"),
        CellLine(B, "passed"),
        CellLine(E, "passed", compared="count"),
        CellLine(G, "not-buildable", message="no zoo recipe builds LlamaForCausalLM"),
    ]
    data = build_data([NightlyReport(report(*lines), "r")])
    assert data["codes"]["W"] == ["passed on a weak check", "☑️"]
    assert data["codes"]["B"] == ["not buildable by this source", "🚧"]
    index = {
        f"{data['classes'][r]}::{data['columns'][c]['name']}": i
        for i, (r, c) in enumerate(zip(data["cell_class"], data["cell_column"]))
    }
    states = [data["states"][s] for s in decode(data)[0]]
    assert {cell: states[index[cell]][0] for cell in (A, B, E, G)} == {A: "W", B: "P", E: "W", G: "B"}
    # The state says what a weak pass compared, in the comment's words; a full pass says nothing.
    assert data["strings"][states[index[A]][9]] == "output names only"
    assert data["strings"][states[index[E]][9]] == "the output count only"
    assert data["strings"][states[index[B]][9]] == ""
    assert data["strings"][states[index[G]][4]] == "no zoo recipe builds LlamaForCausalLM"
    # Weak passes pass; a class the source cannot build is neither passing nor failing: out of the rate.
    assert data["rates"] == [{"dynamo": [1, 1], "onnx": [1, 1], "executorch": [1, 1]}]


def test_runs_are_ordered_and_stored_as_changes():
    newest = report(CellLine(A, "failed", stage="run", message="RuntimeError: x"), created="2026-11-03T03:17:00+00:00")
    oldest = report(
        CellLine(A, "passed"), CellLine(B, "skipped", skip_scope="dynamic"), created="2026-11-01T03:17:00+00:00"
    )
    middle = report(
        CellLine(A, "passed"), CellLine(B, "skipped", skip_scope="dynamic"), created="2026-11-02T03:17:00+00:00"
    )
    data = build_data([NightlyReport(newest, "n"), NightlyReport(oldest, "o"), NightlyReport(middle, "m")])
    assert [r["source"] for r in data["runs"]] == ["o", "m", "n"]
    assert data["runs"][1]["changes"] == []  # nothing changed: nothing stored
    states = decode(data)
    letters = [[data["states"][s][0] for s in run] for run in states]
    index = {
        f"{data['classes'][r]}::{data['columns'][c]['name']}": i
        for i, (r, c) in enumerate(zip(data["cell_class"], data["cell_column"]))
    }
    assert [run[index[A]] for run in letters] == ["P", "P", "F"]
    assert [run[index[B]] for run in letters] == ["S", "S", "-"]  # the newest run lacks B
    assert "full" in data["runs"][-1]  # both cells changed: the full list is the shorter form
    state = data["states"][states[-1][index[A]]]
    assert data["strings"][state[2]] == "run" and data["strings"][state[4]] == "RuntimeError: x"


def test_columns_rows_and_rates():
    lines = [
        CellLine(A, "passed"),
        CellLine(B, "failed"),
        CellLine(G, "passed"),
        CellLine("GPT2Model::test_onnx_export_dynamic", "skipped"),
    ]
    lines.append(CellLine("Gpt10Model::test_onnx_export_static", "passed", probe=True))
    lines.append(CellLine("Gpt9Model::test_onnx_export_static", "error", kind="timeout"))
    data = build_data([NightlyReport(report(*lines), "r")], families={"BertModel": "text-encoder"})
    assert data["classes"] == ["BertModel", "GPT2Model", "Gpt9Model", "Gpt10Model", "LlamaForCausalLM"]
    names = [c["name"] for c in data["columns"]]
    # The job summary's column order: forward before generate, backends in the matrix order, static first.
    assert names == [
        "test_torch_export_dynamic",
        "test_onnx_export_static",
        "test_onnx_export_dynamic",
        G.partition("::")[2],
    ]
    assert data["columns"][3]["variant"] == "gen dyn sc xnn" and data["columns"][3]["cache"] == "static"
    assert data["families"] == ["text-encoder", "unknown"]
    # Probe passes and skips stay out of the pass rate; the timeout counts as a failure.
    assert data["rates"] == [{"dynamo": [0, 1], "onnx": [1, 2], "executorch": [1, 1]}]


def test_families_from_reports_win_over_the_fallback():
    r = report(CellLine(A, "passed"))
    r = replace(r, families={"BertModel": "decoder"})
    data = build_data([NightlyReport(r, "r")], families={"BertModel": "text-encoder"})
    assert data["families"] == ["decoder"]


def test_skip_lines_point_at_the_toml_entry(skiplists_dir):
    found = read_skip_lines(skiplists_dir)
    assert len(found) > 100
    text = (skiplists_dir / "export_skips.toml").read_text(encoding="utf-8").splitlines()
    for (scope, model_class), (file, line) in found.items():
        assert file == "export_skips.toml"
        assert text[line - 1].lstrip().startswith(model_class), (scope, model_class, line)
    lines = skip_lines('# c\n["onnx.dynamic"]\nBertModel = """multi\nline"""\nViTModel = "x"\n')
    assert lines == {
        ("onnx.dynamic", "BertModel"): ("export_skips.toml", 3),
        ("onnx.dynamic", "ViTModel"): ("export_skips.toml", 5),
    }


def test_cli_builds_the_site_and_states_its_size(tmp_path, skiplists_dir):
    for night, status in enumerate(("passed", "failed")):
        r = report(
            CellLine(A, status),
            CellLine(B, "skipped", skip_scope="all", message="</script><b>"),
            created=f"2026-11-0{night + 1}T03:17:00+00:00",
        )
        (tmp_path / f"n{night}").mkdir()
        write_report(r, tmp_path / f"n{night}" / "report.json")
    out = tmp_path / "site"
    result = CliRunner().invoke(
        main,
        [
            "site",
            "--reports",
            str(tmp_path),
            "--out",
            str(out),
            "--skiplists",
            str(skiplists_dir),
            "--repo-url",
            "https://github.com/o/r/",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "2 runs, 2 cells of 1 model classes" in result.output and "KiB" in result.output
    assert sorted(p.name for p in out.iterdir()) == ["app.js", "data.js", "figures.js", "index.html", "style.css"]
    text = (out / "data.js").read_text(encoding="utf-8")
    assert "</script>" not in text  # a reason cannot close the script element
    data = json.loads(text.removeprefix("window.EXPORT_DASHBOARD = ").rstrip().rstrip(";"))
    assert data["repo_url"] == "https://github.com/o/r" and len(data["runs"]) == 2
    # Nothing the page loads comes from the network.
    for name in ("index.html", "app.js", "style.css"):
        page = (out / name).read_text(encoding="utf-8")
        assert "http://" not in page and "https://" not in page and "//cdn" not in page


def test_cli_refuses_bad_input(tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["site", "--reports", str(tmp_path / "nope"), "--out", str(tmp_path / "s")])
    assert result.exit_code == 2 and "no such file or folder" in result.output
    result = runner.invoke(main, ["site", "--reports", str(tmp_path), "--out", str(tmp_path / "s")])
    assert result.exit_code == 2 and "no report.json in this folder" in result.output
    (tmp_path / "report.json").write_text('{"schema": "other"}', encoding="utf-8")
    result = runner.invoke(main, ["site", "--reports", str(tmp_path), "--out", str(tmp_path / "s")])
    assert result.exit_code == 2 and "is not 'export-bot/report@1'" in result.output
    assert find_reports([tmp_path, tmp_path / "report.json"]) == [tmp_path / "report.json"]


HOSTILE_URLS = [
    "javascript:alert(1)",
    "JavaScript:alert(1)",
    " javascript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "http://example.com/run",
    "//evil.example/run",
    "https:alert(1)",
    "https://[::1",
    "vbscript:msgbox(1)",
]


@pytest.mark.parametrize("url", HOSTILE_URLS)
def test_only_https_urls_reach_the_page_data(url):
    hostile = replace(report(CellLine(A, "passed")), run_url=url)
    data = build_data([NightlyReport(hostile, "n0")], repo_url=url, skiplist_url=url)
    assert data["runs"][0]["url"] is None and data["repo_url"] is None and data["skiplist_url"] is None
    kept = replace(hostile, run_url="https://github.com/o/r/actions/runs/1")
    assert build_data([NightlyReport(kept, "n0")])["runs"][0]["url"] == "https://github.com/o/r/actions/runs/1"


def test_figures_go_to_their_own_file_one_row_per_change():
    from bot.site.data import build_figures

    cell = "BertModel::test_onnx_export_static"
    nights = [((("max_abs_error", 1e-6), ("tolerance_ratio", 0.001)),)] * 3 + [((("max_abs_error", 1e-5),),)]
    runs = [
        NightlyReport(Report(verdict="success", headline="", baseline=False, cells=(CellLine(cell, "passed", figures=f[0]),),
                   created=f"2026-11-0{i + 1}T03:00:00+00:00"), f"n{i}")
        for i, f in enumerate(nights)
    ]  # fmt: skip
    figures = build_figures(runs)
    assert figures["names"][:2] == ["max_abs_error", "tolerance_ratio"]
    # Three nights alike are one row; the fourth changed.
    assert figures["cells"]["0"] == [[0, 1e-6, 0.001, None, None], [3, 1e-5, None, None, None]]
