"""The backend registry (bot/registry.py): one declaration per backend, and no other module spelling what it declares."""

from __future__ import annotations

import ast
import dataclasses
import json
import re

import pytest

from bot import registry
from bot.cells import Cell, placed
from bot.scopes import known_scopes
from tests.conftest import ROOT

BOT = ROOT / "bot"


def test_each_backend_is_declared_once_with_a_runner_module_that_exports_and_runs():
    for field in ("name", "word", "label"):
        values = [getattr(backend, field) for backend in registry.REGISTRY]
        assert len(values) == len(set(values)), (field, values)
    for backend in registry.REGISTRY:
        path = ROOT / (backend.runner.replace(".", "/") + ".py")
        defined = {n.name for n in ast.parse(path.read_text(encoding="utf-8")).body if isinstance(n, ast.FunctionDef)}
        assert {"export", "run"} <= defined, (backend.name, sorted(defined))
        assert re.fullmatch(r"#[0-9a-f]{6}", backend.colour), backend


def test_no_other_module_spells_a_backends_label_its_packages_or_its_colour():
    spelled = [
        *(rf'"{b.name}":\s*"{re.escape(b.label)}"' for b in registry.REGISTRY),
        *(re.escape(b.colour) for b in registry.REGISTRY),
        r'"onnxscript",\s*"onnxruntime"',  # the versioned or required packages, as a tuple
        r'"openvino",\s*"executorch"',
    ]
    found = []
    for path in sorted(BOT.rglob("*")):
        if path.suffix not in (".py", ".js") or path == BOT / "registry.py":
            continue
        text = path.read_text(encoding="utf-8")
        found += [(path.relative_to(ROOT).as_posix(), p) for p in spelled if re.search(p, text)]
    assert found == [], found


def test_the_versioned_packages_are_transformers_torch_then_each_backends():
    assert registry.VERSIONED_PACKAGES == (
        "transformers",
        "torch",
        "onnx",
        "onnxscript",
        "onnxruntime",
        "openvino",
        "executorch",
    )


def test_a_registered_backend_is_read_everywhere_for_its_with_block_only():
    fake = registry.Backend("fakert", word="fakert", label="fk", exporter="Fakert", described="Fakert", runner="fakert")
    placed_before = placed(Cell("M", "fakert"))
    with registry.registered(fake):
        assert registry.NAMES[-1] == "fakert" and registry.label("fakert") == "fk"
        assert placed(Cell("M", "fakert")) and "fakert.dynamic" in known_scopes()
    assert "fakert" not in registry.NAMES and registry.label("fakert") == "fakert"
    assert not placed_before and not placed(Cell("M", "fakert")) and "fakert.dynamic" not in known_scopes()


@pytest.mark.parametrize("field", ["name", "word", "label"])
def test_a_backend_is_refused_when_its_name_word_or_label_is_taken(field):
    fake = registry.Backend("fakert", word="fakert", label="fk", exporter="Fakert", described="Fakert", runner="fakert")
    taken = dataclasses.replace(fake, **{field: getattr(registry.BY_NAME["onnx"], field)})
    with pytest.raises(ValueError, match=f"a backend's {field} 'onnx' is already declared"), registry.registered(taken):
        pass
    assert registry.NAMES == ("dynamo", "onnx", "openvino", "executorch")


VIEWS = ("REGISTRY", "BY_NAME", "NAMES", "TARGETS", "LABELS", "VERSIONED_PACKAGES", "BACKENDS")


def test_a_view_is_serialised_by_its_value_never_itself():
    with pytest.raises(TypeError):
        json.dumps(registry.NAMES)  # a view is not a tuple: json refuses it, as the module's docstring says
    assert json.loads(json.dumps(registry.NAMES.current())) == list(registry.NAMES)
    assert json.loads(json.dumps(registry.LABELS.current()))["executorch"] == "et"
    # No module hands a view (or a name bound to one) to json unconverted: `list(NAMES)` is fine.
    for path in (ROOT / "bot").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func) in ("json.dumps", "json.dump"):
                assert not _unconverted(node.args[0]) & set(VIEWS), (
                    f"{path}: {ast.unparse(node)} writes a registry view"
                )


def _unconverted(node: ast.AST) -> set[str]:
    """The names an expression holds as they are, not passed through a call (`list(NAMES)`, `NAMES.current()`)."""
    if isinstance(node, ast.Call):
        return set()
    if isinstance(node, (ast.Name, ast.Attribute)):
        return {node.id if isinstance(node, ast.Name) else node.attr}
    return {name for child in ast.iter_child_nodes(node) for name in _unconverted(child)}
