"""The scope walk for every cell kind, checked against the seed's own rules and quirks (docs/skiplists.md)."""

from __future__ import annotations

import pytest

from bot.cells import BACKENDS, TARGETS, Cell, cells_for
from bot.scopes import exactness_scopes, known_scopes, onnx_optimize_scopes, skip_scopes, walk_rank
from bot.skiplist.model import Skiplist, Skiplists


def seed_export_scopes(generate=False, dynamic=False, backend=None, static_cache=False):
    """The seed's `_export_scopes`, transcribed statement by statement."""
    scopes = ["all"]
    if generate:
        scopes.append("generate")
        if dynamic:
            scopes.append("generate.dynamic")
    scopes.append("dynamic" if dynamic else "static")
    if static_cache:
        scopes.append("static-cache")
    if backend:
        scopes.append(backend)
        if generate:
            scopes.append(f"{backend}.generate")
        scopes.append(f"{backend}.dynamic" if dynamic else f"{backend}.static")
        if static_cache:
            scopes.append(f"{backend}.static-cache")
    return scopes


def seed_calls(cell: Cell):
    """What each seed test function passes to `_should_skip` / `_should_skip_exactness` / the toggle."""
    kw = dict(generate=cell.generate, dynamic=cell.dynamic, static_cache=cell.static_cache)
    if cell.backend == "executorch":
        # `any(_should_skip(..., backend=scope) for scope in ("executorch", backend))`; only output counts compared.
        skips = [s for b in ("executorch", cell.target) for s in seed_export_scopes(backend=b, **kw)]
        return list(dict.fromkeys(skips)), None, None
    skips = seed_export_scopes(backend=cell.backend, **kw)
    if cell.generate and cell.backend in ("onnx", "openvino"):
        exact = None  # generate ONNX/OpenVINO compare output names only
    elif cell.backend == "dynamo" and not cell.generate:
        exact = seed_export_scopes(dynamic=cell.dynamic)  # quirk: test_torch_export passes no backend
    else:
        exact = seed_export_scopes(backend=cell.backend, **kw)
    if exact is not None:
        exact = ["exactness" if s == "all" else f"{s}.exactness" for s in exact]
    toggle = (["all"] + (["dynamic"] if cell.dynamic else [])) if cell.backend == "onnx" else None
    return skips, exact, toggle


ALL_CELLS = list(cells_for("M", generative=True, backends=BACKENDS, targets=TARGETS))


@pytest.mark.parametrize("cell", ALL_CELLS, ids=lambda c: c.name)
def test_walk_matches_the_seed_for_every_cell_kind(cell):
    skips, exact, toggle = seed_calls(cell)
    assert skip_scopes(cell) == skips
    assert exactness_scopes(cell) == exact
    assert onnx_optimize_scopes(cell) == toggle


@pytest.mark.parametrize(
    "cell_name, skips, exact",
    [
        ("test_torch_export_static", "all static dynamo dynamo.static", "exactness static.exactness"),
        (
            "test_torch_export_generate_dynamic",
            "all generate generate.dynamic dynamic dynamo dynamo.generate dynamo.dynamic",
            "exactness generate.exactness generate.dynamic.exactness dynamic.exactness dynamo.exactness "
            "dynamo.generate.exactness dynamo.dynamic.exactness",
        ),
        (
            "test_onnx_export_dynamic",
            "all dynamic onnx onnx.dynamic",
            "exactness dynamic.exactness onnx.exactness onnx.dynamic.exactness",
        ),
        (
            "test_openvino_export_generate_static_static_cache",
            "all generate static static-cache openvino openvino.generate openvino.static openvino.static-cache",
            None,
        ),
        (
            "test_executorch_export_dynamic_xnnpack",
            "all dynamic executorch executorch.dynamic xnnpack xnnpack.dynamic",
            None,
        ),
        (
            "test_executorch_export_generate_static_static_cache_xnnpack",
            "all generate static static-cache executorch executorch.generate executorch.static executorch.static-cache "
            "xnnpack xnnpack.generate xnnpack.static xnnpack.static-cache",
            None,
        ),
    ],
)
def test_walk_rows(cell_name, skips, exact):
    cell = Cell.from_testcase("M", cell_name)
    assert skip_scopes(cell) == skips.split()
    assert exactness_scopes(cell) == (exact.split() if exact else None)


def skiplists(skips: dict, toggles: dict | None = None) -> Skiplists:
    return Skiplists(Skiplist("export_skips.toml", skips), Skiplist("onnx_disable_optimize.toml", toggles or {}))


def test_forward_dynamo_exactness_ignores_backend_scopes_but_generate_uses_them():
    lists = skiplists({"dynamo.exactness": {"M": "noisy"}})
    assert lists.explain(Cell.parse("M::test_torch_export_static")).exactness_scope is None
    assert lists.explain(Cell.parse("M::test_torch_export_generate_static")).exactness_scope == "dynamo.exactness"


def test_executorch_walks_executorch_then_its_target():
    lists = skiplists({"executorch": {"M": "a"}, "xnnpack.static": {"M": "b"}, "mlx.dynamic": {"N": "c"}})
    assert lists.explain(Cell.parse("M::test_executorch_export_static_xnnpack")).scope == "executorch"
    only_target = skiplists({"xnnpack.static": {"M": "b"}})
    assert only_target.explain(Cell.parse("M::test_executorch_export_static_xnnpack")).scope == "xnnpack.static"
    assert not only_target.explain(Cell.parse("M::test_executorch_export_static_mlx")).skipped
    assert lists.explain(Cell.parse("N::test_executorch_export_dynamic_mlx")).scope == "mlx.dynamic"


def test_first_match_is_reported_broad_to_specific():
    lists = skiplists({"onnx.dynamic": {"M": "narrow"}, "all": {"M": "broad"}})
    assert lists.explain(Cell.parse("M::test_onnx_export_dynamic")).scope == "all"


def test_onnx_toggle_walks_all_plus_dynamic_and_never_skips():
    lists = skiplists({}, {"dynamic": {"M": "mis-folds"}})
    static, dynamic = (lists.explain(Cell.parse(f"M::test_onnx_export_{s}")) for s in ("static", "dynamic"))
    assert (static.onnx_optimize, dynamic.onnx_optimize, dynamic.skipped) == (True, False, False)
    assert dynamic.onnx_optimize_scope == "dynamic"
    assert lists.explain(Cell.parse("M::test_onnx_export_generate_dynamic")).onnx_optimize is False
    assert lists.explain(Cell.parse("M::test_torch_export_dynamic")).onnx_optimize is None


def test_known_scopes_are_in_walk_order():
    order = known_scopes()
    assert order[:2] == ("all", "exactness")
    assert walk_rank("onnx") < walk_rank("onnx.dynamic") < walk_rank("openvino") < walk_rank("xnnpack")
    assert walk_rank("aoti") > walk_rank("mlx.static")
    assert "dynamo.exactness" in order and "executorch.exactness" not in order
