"""What a parameterized expansion declares about its variant, read off the method, checked against the name's reading."""

from __future__ import annotations

from types import SimpleNamespace

from parameterized import parameterized

from bot.cells import Cell
from bot.run.declared import declared_arguments, disagreement

STATIC = SimpleNamespace(cache_implementation="static")
DYNAMIC = SimpleNamespace(cache_implementation=None)


class _Module:
    """Expansions in upstream's shape: one honest `name_func`, and one that names the wrong shape."""

    @parameterized.expand(
        [("xnnpack", True, True, STATIC)],
        name_func=lambda f, _, p: f"{f.__name__}_dynamic_multi_token_static_cache_{p.args[0]}",
    )
    def test_executorch_export_generate(self, backend, dynamic, multi_token_decode, generation_config, atol=1e-3):
        pass

    @parameterized.expand([(True, DYNAMIC)], name_func=lambda f, _, p: f"{f.__name__}_static")
    def test_torch_export_generate(self, dynamic, generation_config):
        pass

    def test_onnx_export_static(self):
        pass


def test_the_arguments_an_expansion_binds_are_read_by_parameter_name():
    method = _Module.test_executorch_export_generate_dynamic_multi_token_static_cache_xnnpack
    assert declared_arguments(method) == {
        "backend": "xnnpack",
        "dynamic": True,
        "multi_token_decode": True,
        "generation_config": STATIC,
    }
    assert declared_arguments(_Module.test_onnx_export_static) is None  # not expanded: the name alone
    assert declared_arguments(None) is None


def test_a_name_that_agrees_with_its_declaration_says_nothing():
    name = "test_executorch_export_generate_dynamic_multi_token_static_cache_xnnpack"
    cell = Cell.from_testcase("LlamaForCausalLM", name)
    assert disagreement(cell, declared_arguments(getattr(_Module, name))) is None


def test_a_name_that_reads_as_another_variant_is_said():
    cell = Cell.from_testcase("LlamaForCausalLM", "test_torch_export_generate_static")
    problem = disagreement(cell, declared_arguments(_Module.test_torch_export_generate_static))
    assert problem == "it declares dynamic=True, the name reads shape `static`"
    wrong_target = Cell.from_testcase("M", "test_executorch_export_generate_dynamic_multi_token_mlx")
    arguments = declared_arguments(_Module.test_executorch_export_generate_dynamic_multi_token_static_cache_xnnpack)
    assert "backend='xnnpack'" in disagreement(wrong_target, arguments)
    no_axis = Cell.from_testcase("M", "test_executorch_export_generate_dynamic_static_cache_xnnpack")
    assert "multi_token_decode" in disagreement(no_axis, arguments)
