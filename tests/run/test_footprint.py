"""Recording footprints (bot/run/footprint.py): a real package imported through the recorder, and one real cell."""

from __future__ import annotations

import sys
import traceback

import pytest

from bot.footprints import decode
from bot.run.footprint import Recorder
from bot.run.plan import RunPlan
from bot.run.session import SessionOptions, run_session
from tests.run.plugin_helpers import read_junit

MODULE = '''"""A module shaped like a modeling file: a registry decorator run at import, classes, nested functions."""
from __future__ import annotations

REGISTRY = {}


def register(cls):
    REGISTRY[cls.__name__] = cls
    return cls


@register
class Layer:
    """Doc."""

    def forward(self, x):
        def scale(y):
            return y * 2

        return scale(x) + 1

    def unused(self):
        return 0


def generate(n):
    yield from range(n)


def boom():
    raise ValueError("line kept")


def stub():
    """Only a docstring."""
'''


@pytest.fixture
def package(tmp_path):
    """`fpkg.mod` under a watched folder, imported through a fresh recorder; everything undone after."""
    folder = tmp_path / "src" / "fpkg"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / "mod.py").write_text(MODULE)
    recorder = Recorder([(folder, "src/fpkg")])
    recorder.install()
    sys.path.insert(0, str(tmp_path / "src"))
    try:
        import fpkg.mod

        yield recorder, fpkg.mod, folder
    finally:
        recorder.uninstall()
        sys.path.remove(str(tmp_path / "src"))
        for name in [name for name in sys.modules if name == "fpkg" or name.startswith("fpkg.")]:
            del sys.modules[name]


def test_a_cell_records_what_it_ran_and_the_import_time_code_of_the_files_it_used(package):
    recorder, mod, folder = package
    recorder.start()
    assert mod.Layer().forward(3) == 7
    assert list(mod.generate(2)) == [0, 1]
    footprint = recorder.stop()
    names = {name.removeprefix("src/fpkg/mod.py::") for name in footprint}
    # `register` and the module's own code ran at import, before the cell: kept, since the cell used the file.
    assert names == {"Layer.forward", "Layer.forward.scale", "generate", "register", "<module>"}
    assert "src/fpkg/__init__.py::<module>" not in footprint  # a file the cell never used
    recorder.start()
    assert recorder.stop() == frozenset()  # a cell that ran nothing of the checkout
    assert not (folder / "__pycache__").exists()  # the instrumented code is never cached


def test_the_checkout_s_line_numbers_stay_in_tracebacks(package):
    _, mod, _ = package
    with pytest.raises(ValueError) as raised:
        mod.boom()
    last = traceback.extract_tb(raised.value.__traceback__)[-1]
    assert (last.name, last.line) == ("boom", 'raise ValueError("line kept")')
    assert mod.Layer.__doc__ == "Doc." and mod.REGISTRY == {"Layer": mod.Layer}
    assert mod.stub.__doc__ == "Only a docstring." and mod.stub() is None  # the hit goes after a docstring


def test_the_plan_carries_the_switch():
    plan = RunPlan(cells=(), footprints=True)
    assert RunPlan.from_json(plan.to_json()).footprints is True
    assert RunPlan.from_json({**plan.to_json(), "footprints": None}).footprints is False


@pytest.mark.export
def test_a_real_cell_records_the_model_code_it_ran_and_nothing_of_torch(tmp_path):
    """BertModel on Dynamo from the zoo, in an xdist worker: the recorder is in place before transformers is imported."""
    from bot.cells import Cell

    plan = RunPlan(cells=(Cell.parse("BertModel::test_torch_export_static"),), skiplists=str(tmp_path), footprints=True)
    junit = tmp_path / "junit.xml"
    code = run_session(plan, SessionOptions(junit=junit, workers=1, progress=False, log=tmp_path / "log"))
    assert code == 0, (tmp_path / "log").read_text()
    case = read_junit(junit).cases["BertModel::test_torch_export_static"]
    assert case.outcome == "passed"
    footprint = decode(case.properties["footprint"])
    bert = "src/transformers/models/bert/modeling_bert.py::"
    assert {f"{bert}BertSelfAttention.forward", f"{bert}BertModel.forward"} <= footprint
    assert any(name.startswith("src/transformers/modeling_layers.py::GradientCheckpointingLayer") for name in footprint)
    assert "src/transformers/exporters/exporter_dynamo.py::DynamoExporter.export_program" in footprint
    assert all(name.startswith("src/transformers/") for name in footprint)  # torch's own code is not the checkout's
    assert not any("modeling_llama.py" in name for name in footprint)  # another model's code never ran
