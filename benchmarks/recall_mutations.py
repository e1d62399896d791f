"""The breaking changes `benchmarks/recall.py` replays: small edits to shared modules and test files of Transformers.

Each mutation is a text replacement at an anchor that exists, exactly once, in the real file (the
transformers 5.23.0 sdist for `src/`, upstream's test files for `tests/`); `apply` refuses a file
where an anchor is missing or repeated, so a mutation never silently changes nothing. None of them
edits a model folder: they are the changes a PR gate must see through shared code and tests.

`targets` are the model classes the change obviously reaches: the family the benchmark runs on the
mutated branch as ground truth when the whole sweep is not asked for.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutation:
    name: str
    path: str  # relative to the checkout
    kind: str  # data-dependent, export-only numeric, dynamic-only, item-as-size, input, tester
    summary: str
    edits: tuple[tuple[str, str], ...]  # (anchor, replacement), each anchor exactly once in the file
    targets: tuple[str, ...]

    def apply(self, text: str) -> str:
        """The file's text with every edit made; ValueError names the anchor that is missing or repeated."""
        for anchor, replacement in self.edits:
            count = text.count(anchor)
            if count != 1:
                raise ValueError(f"{self.name}: anchor found {count} times in {self.path}: {anchor.strip()[:80]!r}")
            text = text.replace(anchor, replacement)
        return text


BERT, GPT2, LLAMA, VIT = "BertModel", "GPT2LMHeadModel", "LlamaForCausalLM", "ViTModel"

MUTATIONS: tuple[Mutation, ...] = (
    Mutation(
        name="layers-nan-guard",
        path="src/transformers/modeling_layers.py",
        kind="data-dependent",
        summary="every decoder/encoder layer raises on NaN hidden states (`if torch.isnan(x).any()`)",
        edits=(
            (
                "                return self._gradient_checkpointing_func(partial(forward, self, **kwargs), *args)\n"
                "            return forward(self, *args, **kwargs)\n",
                "                return self._gradient_checkpointing_func(partial(forward, self, **kwargs), *args)\n"
                "            if args and torch.is_tensor(args[0]) and torch.isnan(args[0]).any():\n"
                '                raise ValueError(f"{type(self).__name__} received NaN hidden states")\n'
                "            return forward(self, *args, **kwargs)\n",
            ),
        ),
        targets=(BERT, VIT),
    ),
    Mutation(
        name="layers-export-bf16",
        path="src/transformers/modeling_layers.py",
        kind="export-only numeric",
        summary="while exporting, each layer's input hidden states round-trip through bfloat16 (eager unchanged)",
        edits=(
            (
                "                return self._gradient_checkpointing_func(partial(forward, self, **kwargs), *args)\n"
                "            return forward(self, *args, **kwargs)\n",
                "                return self._gradient_checkpointing_func(partial(forward, self, **kwargs), *args)\n"
                "            if torch.compiler.is_exporting() and args and torch.is_tensor(args[0]) and args[0].is_floating_point():\n"
                "                # exported graphs carry activations between layers in bfloat16: half the memory on device\n"
                "                args = (args[0].to(torch.bfloat16).to(args[0].dtype), *args[1:])\n"
                "            return forward(self, *args, **kwargs)\n",
            ),
        ),
        targets=(BERT, VIT),
    ),
    Mutation(
        name="rope-position-warning",
        path="src/transformers/modeling_rope_utils.py",
        kind="data-dependent",
        summary="RoPE warns when a position id reaches the cached length (`if position_ids.max() >= ...`)",
        edits=(
            (
                "        return rope_forward(self, x, position_ids, **kwargs)\n\n    return wrapper\n",
                "        if position_ids.max() >= self.max_seq_len_cached:\n"
                '            logger.warning_once("position ids reach `max_position_embeddings`: RoPE extrapolates")\n'
                "        return rope_forward(self, x, position_ids, **kwargs)\n\n    return wrapper\n",
            ),
        ),
        targets=("LlamaModel",),
    ),
    Mutation(
        name="masking-causal-skip",
        path="src/transformers/masking_utils.py",
        kind="data-dependent",
        summary="the causal-mask skip reads the padding mask's values while exporting (`fast_all(padding_mask)`)",
        edits=(
            (
                "    if is_torchdynamo_exporting() or (padding_mask is not None and is_tracing(padding_mask)):\n"
                "        return False\n"
                "    # Static caches use a tensor `q_offset` to avoid graph breaks, but reading it would cause one\n",
                "    if padding_mask is not None and is_tracing(padding_mask) and not is_torchdynamo_exporting():\n"
                "        return False\n"
                "    # Static caches use a tensor `q_offset` to avoid graph breaks, but reading it would cause one\n",
            ),
        ),
        targets=(LLAMA, GPT2),
    ),
    Mutation(
        name="masking-arange-cache",
        path="src/transformers/masking_utils.py",
        kind="dynamic-only",
        summary="sdpa_mask memoises its aranges with `lru_cache`: a symbolic length is unhashable",
        edits=(
            (
                "\ndef sdpa_mask(\n",
                "\n@lru_cache(maxsize=64)\n"
                "def _cached_arange(length: int, device) -> torch.Tensor:\n"
                "    return torch.arange(length, device=device)\n\n\n"
                "def sdpa_mask(\n",
            ),
            ("from functools import partial\n", "from functools import lru_cache, partial\n"),
            (
                "    q_arange = torch.arange(q_length, device=device) + q_offset\n"
                "    kv_arange = torch.arange(kv_length, device=device) + kv_offset\n",
                "    q_arange = _cached_arange(q_length, device) + q_offset\n"
                "    kv_arange = _cached_arange(kv_length, device) + kv_offset\n",
            ),
        ),
        targets=(BERT, LLAMA),
    ),
    Mutation(
        name="sdpa-masked-rows",
        path="src/transformers/integrations/sdpa_attention.py",
        kind="data-dependent",
        summary="SDPA raises on a query row its boolean mask hides entirely (`if not mask.any(-1).all()`)",
        edits=(
            (
                "    attn_output = torch.nn.functional.scaled_dot_product_attention(\n",
                "    if attention_mask is not None and attention_mask.dtype == torch.bool and not attention_mask.any(-1).all():\n"
                '        raise ValueError("a query attends to no key: its softmax would be NaN")\n'
                "    attn_output = torch.nn.functional.scaled_dot_product_attention(\n",
            ),
        ),
        targets=(BERT, LLAMA),
    ),
    Mutation(
        name="activations-gelu-clip",
        path="src/transformers/activations.py",
        kind="data-dependent",
        summary="GELUActivation clamps its input only when a value is extreme (`if input.abs().max() > 10`)",
        edits=(
            (
                "        return input * 0.5 * (1.0 + torch.erf(input / math.sqrt(2.0)))\n\n"
                "    def forward(self, input: Tensor) -> Tensor:\n"
                "        return self.act(input)\n",
                "        return input * 0.5 * (1.0 + torch.erf(input / math.sqrt(2.0)))\n\n"
                "    def forward(self, input: Tensor) -> Tensor:\n"
                "        if input.abs().max() > 10:  # keep half-precision activations finite\n"
                "            input = input.clamp(-10, 10)\n"
                "        return self.act(input)\n",
            ),
        ),
        targets=(BERT, VIT),
    ),
    Mutation(
        name="modeling-utils-finite-logits",
        path="src/transformers/modeling_utils.py",
        kind="data-dependent",
        summary="slice_logits_to_keep raises on non-finite hidden states before the LM head",
        edits=(
            (
                "    if isinstance(logits_to_keep, torch.Tensor) and logits_to_keep.ndim == 2:\n",
                "    if not torch.isfinite(hidden_states).all():\n"
                '        raise ValueError("non-finite hidden states reached the LM head")\n'
                "    if isinstance(logits_to_keep, torch.Tensor) and logits_to_keep.ndim == 2:\n",
            ),
        ),
        targets=(LLAMA, GPT2),
    ),
    Mutation(
        name="cache-trim-item",
        path="src/transformers/cache_utils.py",
        kind="item-as-size",
        summary="DynamicLayer.update trims the cache to the written length, read with `.item()`",
        edits=(
            (
                "        self.keys = torch.cat([self.keys, key_states], dim=-2)\n"
                "        self.values = torch.cat([self.values, value_states], dim=-2)\n"
                "        return self.keys, self.values\n",
                "        self.keys = torch.cat([self.keys, key_states], dim=-2)\n"
                "        self.values = torch.cat([self.values, value_states], dim=-2)\n"
                "        # positions never written stay zero: hand attention only the written ones\n"
                "        written = int((self.keys != 0).any(-1).any(1).any(0).sum().item())\n"
                "        return self.keys[..., :written, :], self.values[..., :written, :]\n",
            ),
        ),
        targets=(LLAMA, GPT2),
    ),
    Mutation(
        name="generic-vocab-check",
        path="src/transformers/utils/generic.py",
        kind="data-dependent",
        summary="merge_with_config_defaults checks `input_ids` against the vocabulary (`if (ids >= vocab).any()`)",
        edits=(
            (
                "    @wraps(func)\n    def wrapper(self, *args, **kwargs):\n        args_with_config_defaults = [\n",
                "    @wraps(func)\n    def wrapper(self, *args, **kwargs):\n"
                '        input_ids, vocab_size = kwargs.get("input_ids"), getattr(self.config, "vocab_size", None)\n'
                "        if input_ids is not None and vocab_size and (input_ids >= vocab_size).any():\n"
                '            raise ValueError(f"`input_ids` holds ids beyond the vocabulary ({vocab_size})")\n'
                "        args_with_config_defaults = [\n",
            ),
        ),
        targets=(BERT, "LlamaModel"),
    ),
    Mutation(
        name="test-export-onnx-int32",
        path="tests/exporters/test_export.py",
        kind="input",
        summary="the ONNX runs feed 32-bit integer inputs (ONNX Runtime then refuses the graph's int64 ids)",
        edits=(
            (
                "    set_seed(1234)\n    onnx_inputs = get_leaf_tensors(inputs)\n",
                "    set_seed(1234)\n"
                "    # ONNX Runtime Web and mobile take 32-bit ids: test what they will be fed\n"
                "    onnx_inputs = {\n"
                "        k: v.to(torch.int32) if v.dtype == torch.int64 else v for k, v in get_leaf_tensors(inputs).items()\n"
                "    }\n",
            ),
        ),
        targets=(BERT, VIT),
    ),
    Mutation(
        name="test-export-padded-input",
        path="tests/exporters/test_export.py",
        kind="input",
        summary="the dynamo forward test runs the exported program with the last token padded out",
        edits=(
            (
                "                        exported_outputs = get_leaf_tensors(exported_program.module()(**copy.deepcopy(inputs)))\n"
                '                        self.assertTrue(exported_outputs, f"Exported outputs are empty for {name}.")\n',
                "                        run_inputs = copy.deepcopy(inputs)\n"
                '                        if "attention_mask" in run_inputs:  # the exported graph must honour padding\n'
                '                            run_inputs["attention_mask"][:, -1] = 0\n'
                "                        exported_outputs = get_leaf_tensors(exported_program.module()(**run_inputs))\n"
                '                        self.assertTrue(exported_outputs, f"Exported outputs are empty for {name}.")\n',
            ),
        ),
        targets=(BERT, "GPT2Model"),
    ),
    Mutation(
        name="tester-dynamic-rope",
        path="tests/causal_lm_tester.py",
        kind="tester",
        summary="the causal-LM tester builds every config with dynamic NTK RoPE (a data-dependent update)",
        edits=(
            (
                "        return self.config_class(**kwargs)\n\n    def create_and_check_model(\n",
                "        config = self.config_class(**kwargs)\n"
                "        # exercise the dynamic NTK RoPE in every causal-LM test\n"
                '        config.rope_parameters = {**config.rope_parameters, "rope_type": "dynamic", "factor": 2.0}\n'
                "        return config\n\n    def create_and_check_model(\n",
            ),
        ),
        targets=("LlamaModel",),
    ),
)


def by_name(names: str | None) -> tuple[Mutation, ...]:
    """The mutations a `--mutations a,b` filter names (all without one); an unknown name is a SystemExit."""
    if not names:
        return MUTATIONS
    known = {m.name: m for m in MUTATIONS}
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise SystemExit(f"unknown mutations {unknown}; known: {', '.join(known)}")
    return tuple(known[n] for n in wanted)
