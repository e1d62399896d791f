"""The import graph on hand-made trees: lazy inits resolved to the defining module, TYPE_CHECKING and docstrings no edge."""

from __future__ import annotations

import pytest

from bot.select.imports import ImportGraph, build_graph, graph_paths, module_name, parse_file

T = "src/transformers"
LAZY = (
    "from typing import TYPE_CHECKING\n"
    "from {up}utils import _LazyModule\n"
    "from {up}utils.import_utils import define_import_structure\n\n"
    "if TYPE_CHECKING:\n"
    "{typing}"
    "else:\n"
    "    import sys\n\n"
    "    _file = globals()['__file__']\n"
    "    sys.modules[__name__] = _LazyModule(__name__, _file, define_import_structure(_file), module_spec=__spec__)\n"
)
# Transformers 5.x in miniature: a lazy top-level init (an `_import_structure` literal plus the
# models folder handed to `define_import_structure`), lazy model inits, an eager utils init.
TREE = {
    f"{T}/__init__.py": (
        '__version__ = "5.23.0"\n'
        "from typing import TYPE_CHECKING\n"
        "from . import only_init\n"
        "from .utils import logging as logging\n"
        "from .utils import is_torch_available as is_torch_available\n"
        "from .utils.import_utils import define_import_structure\n"
        '_import_structure = {"modeling_utils": ["PreTrainedModel"], "utils": ["ModelOutput"]}\n'
        "if TYPE_CHECKING:\n    from .models import *\n    from .modeling_utils import PreTrainedModel\n"
        "else:\n"
        '    import_structure = define_import_structure(Path(__file__).parent / "models", prefix="models")\n'
    ),
    f"{T}/only_init.py": "VALUE = 1\n",
    f"{T}/modeling_layers.py": "from .utils import ModelOutput\n\nclass GradientCheckpointingLayer: ...\n",
    f"{T}/modeling_utils.py": (
        "from . import __version__\n\n"
        "def post_init():\n    from .modeling_layers import GradientCheckpointingLayer\n"
        "__all__ = ['PreTrainedModel']\n"
    ),
    f"{T}/modeling_rope_utils.py": "ROPE = {}\n",
    f"{T}/pytorch_utils.py": "def prune(): ...\n",
    # The circle of the real tree: utils takes `__version__` from the top-level init, which takes
    # `is_torch_available` from utils.
    f"{T}/utils/__init__.py": (
        "from .. import __version__\n"
        "from .generic import ModelOutput\n"
        "from .import_utils import define_import_structure, is_torch_available\n"
    ),
    f"{T}/utils/generic.py": "class ModelOutput: ...\n",
    f"{T}/utils/import_utils.py": "def define_import_structure(path, prefix=None): ...\ndef is_torch_available(): ...\n",
    f"{T}/utils/logging.py": "def get_logger(): ...\n",
    f"{T}/models/__init__.py": LAZY.format(up="..", typing="    from .bert import *\n    from .gpt2 import *\n"),
    f"{T}/models/bert/__init__.py": LAZY.format(up="...", typing="    from .modeling_bert import *\n"),
    f"{T}/models/bert/modeling_bert.py": (
        "from ...modeling_layers import GradientCheckpointingLayer\n"
        "from ...modeling_utils import PreTrainedModel\n"
        "from ...utils import logging\n"
        "__all__ = ['BertModel']\n"
    ),
    f"{T}/models/gpt2/__init__.py": LAZY.format(up="...", typing="    from .modeling_gpt2 import *\n"),
    f"{T}/models/gpt2/modeling_gpt2.py": (
        '"""GPT-2.\n\nExample:\n\nfrom transformers import BertModel\n"""\n'
        "from typing import TYPE_CHECKING\n"
        "from ...modeling_utils import PreTrainedModel\n\n"
        "if TYPE_CHECKING:\n    from ...modeling_rope_utils import ROPE\n"
        "else:\n    import torch\n\n"
        "def prune(model):\n    from ...pytorch_utils import (\n        prune,\n    )\n"
        "__all__ = ['GPT2Model']\n"
    ),
    f"{T}/models/gpt2/convert_gpt2_checkpoint.py": "from transformers import GPT2Model\n",
    "tests/__init__.py": "",
    "tests/exporters/__init__.py": "",
    "tests/exporters/test_export.py": "from transformers import PreTrainedModel\n\nclass ExportTesterMixin: ...\n",
    "tests/test_modeling_common.py": "from .exporters.test_export import ExportTesterMixin\n",
    "tests/models/__init__.py": "",
    "tests/models/bert/__init__.py": "",
    "tests/models/bert/test_modeling_bert.py": (
        "from transformers import BertModel, is_torch_available\n"
        "from transformers.testing_utils import slow\n"
        "from ...test_modeling_common import ModelTesterMixin\n"
    ),
}


@pytest.fixture(scope="module")
def graph() -> ImportGraph:
    return build_graph({path: TREE[path] for path in graph_paths(TREE)})


def test_a_name_from_a_lazy_package_is_an_edge_to_the_module_that_defines_it(graph):
    # `from transformers import BertModel`: the top init's star import of models, models' of bert,
    # bert's lazy structure (its modules' `__all__`) → modeling_bert.py; never the three inits.
    bert_tests = graph.imports["tests/models/bert/test_modeling_bert.py"]
    # `is_torch_available`: the top init takes it from utils, utils from import_utils.py. And
    # `transformers.testing_utils` is no file of this tree (left out, as torch is).
    assert bert_tests == {
        f"{T}/models/bert/modeling_bert.py",
        f"{T}/utils/import_utils.py",
        "tests/test_modeling_common.py",
    }
    assert graph.imports[f"{T}/models/bert/modeling_bert.py"] == {
        f"{T}/modeling_layers.py",
        f"{T}/modeling_utils.py",
        f"{T}/utils/logging.py",  # a submodule named in `from ...utils import logging`
    }
    # `_import_structure` names the module for `PreTrainedModel`; an eager init's own import names
    # `ModelOutput`'s (utils/__init__.py imports it from generic.py).
    assert graph.imports["tests/exporters/test_export.py"] == {f"{T}/modeling_utils.py"}
    assert graph.imports[f"{T}/modeling_layers.py"] == {f"{T}/utils/generic.py"}


def test_the_order_files_are_read_in_changes_no_edge(graph):
    # Whichever init is asked first, the circle between utils and the top-level init resolves the same.
    backwards = build_graph({path: TREE[path] for path in reversed(graph_paths(TREE))})
    assert backwards == graph


def test_function_level_imports_count_typing_ones_and_docstring_examples_do_not(graph):
    # pytorch_utils inside a function counts; modeling_rope_utils under TYPE_CHECKING, torch outside
    # the tree and the docstring's `from transformers import BertModel` do not.
    assert graph.imports[f"{T}/models/gpt2/modeling_gpt2.py"] == {f"{T}/modeling_utils.py", f"{T}/pytorch_utils.py"}
    assert f"{T}/modeling_layers.py" in graph.imports[f"{T}/modeling_utils.py"]
    assert f"{T}/models/gpt2/convert_gpt2_checkpoint.py" not in graph.imports  # upstream's fetcher skips them


def test_reached_files_carry_their_shortest_chain_back_to_the_change(graph):
    reached = graph.reached_by([f"{T}/modeling_layers.py"])
    assert reached[f"{T}/modeling_layers.py"] == (f"{T}/modeling_layers.py",)
    assert reached[f"{T}/models/bert/modeling_bert.py"] == (
        f"{T}/models/bert/modeling_bert.py",
        f"{T}/modeling_layers.py",
    )
    assert reached[f"{T}/models/gpt2/modeling_gpt2.py"] == (
        f"{T}/models/gpt2/modeling_gpt2.py",
        f"{T}/modeling_utils.py",
        f"{T}/modeling_layers.py",
    )
    assert reached["tests/models/bert/test_modeling_bert.py"][-2:] == (
        f"{T}/models/bert/modeling_bert.py",
        f"{T}/modeling_layers.py",
    )
    tester = graph.reached_by(["tests/exporters/test_export.py"])
    assert tester["tests/models/bert/test_modeling_bert.py"] == (
        "tests/models/bert/test_modeling_bert.py",
        "tests/test_modeling_common.py",
        "tests/exporters/test_export.py",
    )


def test_a_reached_init_is_not_followed_so_lazy_inits_do_not_reach_everything(graph):
    # only_init.py is imported by the top-level init alone: the init is reached, who imports it is not.
    assert set(graph.reached_by([f"{T}/only_init.py"])) == {f"{T}/only_init.py", f"{T}/__init__.py"}
    # A model's init defines nothing: a change to it reaches nothing but itself.
    assert set(graph.reached_by([f"{T}/models/gpt2/__init__.py"])) == {f"{T}/models/gpt2/__init__.py"}
    # A changed init reaches who takes a name it defines itself (modeling_utils takes `__version__`).
    top = graph.reached_by([f"{T}/__init__.py"])
    assert f"{T}/modeling_utils.py" in top and f"{T}/models/bert/modeling_bert.py" in top


def test_parse_file_screens_multi_line_and_nested_typing_blocks():
    source = (
        "import os\n"
        "class A:\n"
        "    if TYPE_CHECKING:\n"
        "        from .hint import Hint\n"
        "\n"
        "        # a comment at the block's depth keeps it open\n"
        "        from .hint2 import Other\n"
        "    from .after import (\n"
        "        One,  # why\n"
        "        Two,\n"
        "    )\n"
    )
    parsed = parse_file(f"{T}/models/x/modeling_x.py", source)
    assert [(i.module, i.names) for i in parsed.runtime] == [
        ("os", None),
        ("transformers.models.x.after", ("One", "Two")),
    ]
    assert {i.module for i in parsed.every} >= {"transformers.models.x.hint", "transformers.models.x.hint2"}


def test_module_names_follow_the_src_layout():
    assert module_name(f"{T}/models/bert/modeling_bert.py") == "transformers.models.bert.modeling_bert"
    assert module_name(f"{T}/models/bert/__init__.py") == "transformers.models.bert"
    assert module_name("tests/models/bert/test_modeling_bert.py") == "tests.models.bert.test_modeling_bert"
