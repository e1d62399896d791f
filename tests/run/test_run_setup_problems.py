"""`export-bot run` over a checkout whose shared helper does not import: every cell listed, the cause said once, exit 2."""

from __future__ import annotations

import subprocess
import sys

from bot.outcomes import Status
from bot.setup_problems import headline, nothing_built, setup_causes
from tests.conftest import ROOT, SKIPLISTS
from tests.run.plugin_helpers import read_junit

BROKEN = ROOT / "tests" / "fixtures" / "transformers_checkout_broken"


def test_a_broken_shared_helper_is_one_cause_and_exits_2(tmp_path):
    junit = tmp_path / "out.xml"
    command = [sys.executable, "-m", "bot", "run", "--source", f"transformers-tests:{BROKEN}"]
    command += ["--skiplists", str(SKIPLISTS), "--backends", "dynamo,onnx", "-n", "0", "--junit", str(junit)]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert result.returncode == 2, result.stderr[-3000:]
    cases = read_junit(junit).cases
    # The smoke preset, generate included: BertModel 4 + LlamaForCausalLM 4 forward + 8 generate + ViTModel 4.
    assert len(cases) == 20
    assert sum("_generate_" in cell for cell in cases) == 8
    assert {case.properties["setup_origin"] for case in cases.values()} == {"tests/generation/test_utils.py"}
    assert {case.properties["kind"] for case in cases.values()} == {"build"}
    # Said once: the headline in the run summary and the exit message, the traceback once.
    stderr = result.stderr
    assert stderr.count("3 test modules failed to import: tests/generation/test_utils.py raised ImportError") == 2
    assert stderr.count("Traceback (most recent call last)") == 1
    assert "nothing could be built" in stderr.splitlines()[-1]
    # What the checkout holds against what is imported, said before any cell and kept in the JUnit.
    [said] = [line for line in stderr.splitlines() if line.startswith(f"checkout {BROKEN}")]
    assert "importing transformers" in said and stderr.index(said) < stderr.index("[ 1/20]")
    assert read_junit(junit).suite["source.checkout"] == said


CAUSES = [
    ({"setup_module": "tests/models/bert/test_modeling_bert.py", "setup_origin": "tests/generation/test_utils.py"},
     "ImportError: x (tests/generation/test_utils.py raised it while importing tests/models/bert/test_modeling_bert.py)"),
    ({"setup_module": "tests/models/vit/test_modeling_vit.py", "setup_origin": "tests/generation/test_utils.py"},
     "ImportError: x (tests/generation/test_utils.py raised it while importing tests/models/vit/test_modeling_vit.py)"),
    ({"setup_module": "tests/models/vit/test_modeling_vit.py", "setup_origin": "tests/generation/test_utils.py"},
     "ImportError: x (tests/generation/test_utils.py raised it while importing tests/models/vit/test_modeling_vit.py)"),
    ({"setup_module": "tests/models/t5/test_modeling_t5.py"}, "SyntaxError: invalid syntax (tests/models/t5/…)"),
    ({}, "ValueError: a tester bug, not a setup problem"),
]  # fmt: skip


def test_setup_causes_group_by_the_file_that_raised():
    causes = setup_causes(CAUSES)
    assert [(c.origin, c.message, len(c.modules), c.cells) for c in causes] == [
        ("tests/generation/test_utils.py", "ImportError: x", 2, 3),
        ("tests/models/t5/test_modeling_t5.py", "SyntaxError: invalid syntax", 1, 1),
    ]
    assert headline(causes).startswith("3 test modules failed to import: tests/generation/test_utils.py raised")


def test_nothing_built_means_every_attempted_cell_is_a_build_error():
    build, skipped, passed = (Status.ERROR, "build"), (Status.SKIPPED, None), (Status.PASSED, None)
    assert nothing_built([build, build, skipped]) is True
    assert nothing_built([build, passed]) is False
    assert nothing_built([skipped]) is False  # nothing attempted is not a broken setup
    assert nothing_built([(Status.ERROR, "crash")]) is False
    not_buildable = (Status.NOT_BUILDABLE, None)
    assert nothing_built([not_buildable, build]) is True  # no cell was built, whatever the reason
    assert nothing_built([not_buildable, passed]) is False


def test_check_on_a_broken_checkout_writes_its_files_and_exits_2(tmp_path):
    """`check` loses nothing (report, comment, JUnit are written) and still exits 2: nothing could be built."""
    out = tmp_path / "out"
    command = [sys.executable, "-m", "bot", "check", "--source", f"transformers-tests:{BROKEN}", "--repo", str(BROKEN)]
    command += ["--skiplists", str(SKIPLISTS), "--models", "BertModel", "--backends", "dynamo", "-n", "0"]
    command += ["--out", str(out)]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert result.returncode == 2, result.stderr[-3000:]
    assert "nothing could be built" in result.stderr.splitlines()[-1]
    assert (out / "report.json").is_file() and (out / "comment.md").is_file()
    assert "skiplists.patch" not in {p.name for p in out.iterdir()}  # a setup problem is never proposed as a skip
