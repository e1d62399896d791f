"""`run --models BertModel` on a checkout of 400 model folders vs one: import cost must not grow (target ≤ 1.2×).

Usage: .venv/bin/python benchmarks/tester_import.py [--folders 400] [--repeat 2]
Builds two checkouts from the fixture (tests/fixtures/transformers_checkout): `small` holds the
BERT folder alone, `big` holds it plus N synthetic model folders whose test modules are the size
of upstream's (~30 kB, testers, mixins, relative imports). Each synthetic module raises when
imported, so a run that imported one would show it. Prints the listing time of each and the
wall time of the real command (one dynamo cell, in-process worker) on each, best of --repeat.
"""

from __future__ import annotations

import os
import sys

# benchmarks/select.py shares its name with the stdlib `select` module, which `subprocess`
# imports: keep this folder off sys.path so the real one is found.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]

import argparse  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.models.sources.transformers_tests import TransformersTestsSource  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "transformers_checkout"

SYNTHETIC = '''"""Synthetic model {n}: a test module the size of upstream's; importing it is a benchmark failure."""

import unittest

from transformers import is_torch_available

from ...generation.test_utils import GenerationTesterMixin
from ...test_export_common import ExportGenerateTesterMixin
from ...test_modeling_common import ModelTesterMixin, ids_tensor, random_attention_mask

raise RuntimeError("benchmark: tests/models/{n}/test_modeling_{n}.py must not be imported for --models BertModel")


class {cap}ModelTester:
    def __init__(self, parent, batch_size=2, seq_length=7, vocab_size=99, hidden_size=32):
        self.parent = parent
        self.batch_size = batch_size
        self.seq_length = seq_length

    def prepare_config_and_inputs_for_common(self):
        input_ids = ids_tensor([self.batch_size, self.seq_length], 99)
        return None, {{"input_ids": input_ids, "attention_mask": random_attention_mask([2, 7])}}
{padding}

class {cap}ModelTest(ModelTesterMixin, GenerationTesterMixin, ExportGenerateTesterMixin, unittest.TestCase):
    all_model_classes = (
        (
            {cap}Model,
            {cap}ForCausalLM,
            {cap}ForSequenceClassification,
        )
        if is_torch_available()
        else ()
    )
    test_torch_exportable = True

    def setUp(self):
        self.model_tester = {cap}ModelTester(self)
{padding}
'''

PAD_METHOD = '''
    def test_behaviour_{i}(self):
        """Upstream test modules are long: dozens of tests like this one ({i})."""
        config, inputs = self.model_tester.prepare_config_and_inputs_for_common()
        for key, value in inputs.items():
            self.assertIsNotNone(value, msg=f"{{key}} should be set for check {i}")
'''


def build(root: Path, folders: int) -> Path:
    tests = root / "tests"
    shutil.copytree(FIXTURE / "tests", tests, ignore=shutil.ignore_patterns("__pycache__", "llama"))
    padding = "".join(PAD_METHOD.format(i=i) for i in range(40))
    for index in range(folders):
        name = f"synth{index:03d}"
        folder = tests / "models" / name
        folder.mkdir()
        (folder / "__init__.py").write_text("")
        text = SYNTHETIC.format(n=name, cap=name.capitalize(), padding=padding)
        (folder / f"test_modeling_{name}.py").write_text(text)
    return root


def list_seconds(root: Path, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        TransformersTestsSource(root).classes()
        best = min(best, time.perf_counter() - start)
    return best


def run_seconds(root: Path, work: Path) -> float:
    junit = work / f"{root.name}.xml"
    command = [sys.executable, "-m", "bot", "run", "--source", f"transformers-tests:{root}", "--models", "BertModel"]
    command += ["--backends", "dynamo", "--shapes", "static", "-n", "0", "--junit", str(junit)]
    command += ["--skiplists", str(ROOT / "skiplists")]
    start = time.perf_counter()
    result = subprocess.run(command, cwd=work, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"run on {root.name} exited {result.returncode}:\n{result.stderr[-3000:]}")
    # A synthetic module imported anyway (eagerly, or to list its classes) would only be logged
    # as a setup problem while BertModel still passes: that is a failed benchmark too.
    if "must not be imported" in result.stderr + junit.read_text():
        raise SystemExit(f"run on {root.name} imported a synthetic test module:\n{result.stderr[-3000:]}")
    if "<failure" in junit.read_text() or "<error" in junit.read_text():
        raise SystemExit(f"run on {root.name}: the BertModel cell did not pass:\n{junit.read_text()[-3000:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folders", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tester-import-") as tmp:
        work = Path(tmp)
        small, big = build(work / "small", 0), build(work / "big", args.folders)
        files = len(list(big.glob("tests/models/*/test_modeling_*.py")))
        size = sum(p.stat().st_size for p in big.glob("tests/models/*/test_modeling_*.py")) / 1e6
        print(f"big checkout: {files} test modules, {size:.1f} MB of test code; small: 1 test module")
        list_small, list_big = list_seconds(small, 5), list_seconds(big, 5)
        print(f"listing classes (text only):   small {list_small * 1000:7.1f} ms   big {list_big * 1000:7.1f} ms")
        runs: dict[str, list[float]] = {"small": [], "big": []}
        for _ in range(args.repeat):  # alternate, so a busy moment of the machine hits both
            runs["small"].append(run_seconds(small, work))
            runs["big"].append(run_seconds(big, work))
        best_small, best_big = min(runs["small"]), min(runs["big"])
        ratio = best_big / best_small
        print(f"run --models BertModel (1 cell): small {best_small:6.2f} s   big {best_big:6.2f} s")
        print(f"ratio big/small: {ratio:.3f} (target ≤ 1.2) {'OK' if ratio <= 1.2 else 'OVER'}")


if __name__ == "__main__":
    main()
