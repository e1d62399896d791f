"""Scope minimisation: table tests from the issue's Done-when and a property over random outcome sets."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.cells import Cell
from bot.propose.minimize import minimal_scopes, within
from bot.scopes import exactness_scopes, skip_scopes
from tests.propose.helpers import row


def propose(cells, failing):
    must = [c for c in cells if failing(c)]
    forbid = [c for c in cells if not failing(c)]
    return minimal_scopes(must, forbid)


def covered_by(scopes, cells, walk=skip_scopes):
    return {c for c in cells if any(s in (walk(c) or ()) for s in scopes)}


CASES = [
    # (name, generative, failing predicate, expected scopes)
    ("one backend, forward", False, lambda c: c.backend == "onnx", ("onnx",)),
    ("one backend, forward and generate", True, lambda c: c.backend == "openvino", ("openvino",)),
    ("dynamic on every backend", False, lambda c: c.dynamic, ("dynamic",)),
    ("dynamic on every backend, generative", True, lambda c: c.dynamic, ("dynamic",)),
    ("single forward cell", False, lambda c: c.backend == "onnx" and c.dynamic, ("onnx.dynamic",)),
    ("single ExecuTorch cell", False, lambda c: c.backend == "executorch" and c.dynamic, ("executorch.dynamic",)),
    ("generate only, every backend", True, lambda c: c.generate, ("generate",)),
    ("generate only, one backend", True, lambda c: c.generate and c.backend == "dynamo", ("dynamo.generate",)),
    ("generate dynamic, every backend", True, lambda c: c.generate and c.dynamic, ("generate.dynamic",)),
    ("static cache, every backend", True, lambda c: c.static_cache, ("static-cache",)),
    ("static cache, one backend", True, lambda c: c.static_cache and c.backend == "onnx", ("onnx.static-cache",)),
    ("everything", True, lambda c: True, ("all",)),
    (
        "a mix",
        False,
        lambda c: c.backend == "onnx" or (c.backend == "dynamo" and c.dynamic),
        ("dynamo.dynamic", "onnx"),
    ),
    (
        "a mix with generate",
        True,
        lambda c: (c.generate and c.backend == "openvino") or (c.backend == "executorch" and not c.dynamic),
        ("openvino.generate", "executorch.static"),
    ),
]


@pytest.mark.parametrize("name, generative, failing, expected", CASES, ids=[c[0] for c in CASES])
def test_table(name, generative, failing, expected):
    cells = row(generative=generative)
    cover = propose(cells, failing)
    assert cover.scopes == expected
    assert not cover.uncoverable
    assert covered_by(cover.scopes, cells) == {c for c in cells if failing(c)}


def test_one_executorch_target_fails():
    cells = row(targets=("xnnpack", "mlx"))
    cover = propose(cells, lambda c: c.target == "mlx")
    assert cover.scopes == ("mlx",)


def test_one_executorch_target_dynamic():
    cells = row(generative=True, targets=("xnnpack", "mlx"))
    cover = propose(cells, lambda c: c.target == "xnnpack" and c.dynamic)
    assert cover.scopes == ("xnnpack.dynamic",)


def test_broad_scope_that_would_cover_a_passing_cell_is_never_produced():
    # Every dynamic cell fails except ONNX's: `dynamic` would skip it, so each backend gets its own.
    cells = row()
    cover = propose(cells, lambda c: c.dynamic and c.backend != "onnx")
    assert "dynamic" not in cover.scopes and "all" not in cover.scopes
    assert cover.scopes == ("dynamo.dynamic", "openvino.dynamic", "executorch.dynamic")


def test_cells_not_addressable_alone_are_reported_uncoverable():
    # In a generative row, `onnx.dynamic` also holds the ONNX dynamic generate cells: when those
    # pass, the forward dynamic cell cannot be skipped alone, and no passing cell is skipped for it.
    cells = row(generative=True)
    target = Cell("FooModel", "onnx", "dynamic")
    cover = propose(cells, lambda c: c == target)
    assert cover.scopes == ()
    assert cover.uncoverable == (target,)


def test_uncoverable_cells_do_not_stop_the_rest():
    cells = row(generative=True)
    lone = Cell("FooModel", "onnx", "dynamic")
    cover = propose(cells, lambda c: c == lone or c.backend == "openvino")
    assert cover.scopes == ("openvino",)
    assert cover.uncoverable == (lone,)


def test_cells_that_did_not_run_may_be_covered_but_ties_prefer_fewer_of_them():
    # Only ONNX ran and all of it fails: `all` and `onnx` both cover it, but `all` would guess
    # about three backends nobody ran.
    cells = [c for c in row() if c.backend == "onnx"]
    unrun = [c for c in row() if c.backend != "onnx"]
    cover = minimal_scopes(cells, [], unknown=unrun)
    assert cover.scopes == ("onnx",)


def test_ties_go_to_the_broader_scope():
    # Only forward ONNX cells ran; `onnx` and `onnx.static` + … tie on count 1 vs 2, and
    # `all`/`onnx` tie on everything but breadth when nothing else is known.
    cells = [c for c in row() if c.backend == "onnx"]
    assert minimal_scopes(cells, []).scopes == ("all",)


def test_dont_care_cells_may_be_covered():
    cells = row()
    must = [c for c in cells if c.backend == "onnx" and not c.dynamic]
    forbid = [c for c in cells if c.backend != "onnx"]
    # The ONNX dynamic cell did not pass (still failing, or not run): one `onnx` entry is enough.
    assert minimal_scopes(must, forbid).scopes == ("onnx",)


def test_narrowing_stays_inside_the_original_scope():
    allowed = within("onnx")
    assert allowed("onnx.dynamic") and allowed("onnx") and not allowed("dynamic") and not allowed("all")
    assert within("dynamic")("onnx.dynamic") and within("dynamic")("generate.dynamic")
    assert not within("dynamic")("onnx")


def test_exactness_walk():
    cells = [c for c in row() if exactness_scopes(c) is not None]
    must = [c for c in cells if c.backend == "onnx"]
    cover = minimal_scopes(must, [c for c in cells if c not in must], walk=exactness_scopes)
    assert cover.scopes == ("onnx.exactness",)


ROW = row(generative=True, targets=("xnnpack", "mlx"))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.booleans(), min_size=len(ROW), max_size=len(ROW)), st.integers(0, len(ROW)))
def test_property_covers_exactly_the_failing_cells(flags, keep):
    ran = ROW[:keep] if keep else ROW
    flags = flags[: len(ran)]
    failing = {c for c, f in zip(ran, flags) if f}
    passing = set(ran) - failing
    cover = minimal_scopes(failing, passing)
    hit = covered_by(cover.scopes, ran)
    # Never a passing cell; every failing cell either covered or reported, never both.
    assert not hit & passing
    assert hit == failing - set(cover.uncoverable)
    # A cell is uncoverable exactly when each scope of its walk reaches a passing cell.
    for cell in cover.uncoverable:
        assert all(covered_by([s], passing) for s in skip_scopes(cell))
    # Minimality against the trivially valid cover: one finest scope per failing cell's group.
    assert len(cover.scopes) <= len(failing)


@settings(max_examples=200, deadline=None)
@given(st.sets(st.sampled_from(row())))
def test_property_exact_cover_on_an_addressable_row(failing):
    # A forward-only row with one target: every cell has a scope of its own (`<backend>.<shape>`),
    # so an exact cover always exists and is found.
    cells = row()
    cover = minimal_scopes(failing, set(cells) - failing)
    assert cover.uncoverable == ()
    assert covered_by(cover.scopes, cells) == failing


def test_search_budget_falls_back_to_a_valid_greedy_cover(monkeypatch):
    import bot.propose.minimize as minimize

    monkeypatch.setattr(minimize, "_SEARCH_BUDGET", 1)
    cells = row()
    failing = {c for c in cells if c.dynamic or c.backend == "onnx"}
    cover = minimal_scopes(failing, set(cells) - failing)
    assert covered_by(cover.scopes, cells) == failing and not cover.uncoverable
