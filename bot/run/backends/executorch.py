"""ExecuTorch: export with `ExecutorchExporter`, run by positional binding (the seed's `_run_executorch_program`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
from executorch.runtime import Runtime, Verification
from transformers import set_seed
from transformers.exporters.exporter_executorch import ExecutorchConfig, ExecutorchExporter

from bot.run.backends import RuntimeLimit
from bot.run.judge import is_executorch_runtime_limit as is_runtime_limit

LIMIT = "executorch-runtime-limit"


def export(
    model: torch.nn.Module, inputs: dict, *, dynamic: bool, target: str | None = None, optimize: bool | None = None
) -> Any:
    config = ExecutorchConfig(backend=target or "xnnpack", dynamic=dynamic)
    program, _metadata = ExecutorchExporter().export_program(model, inputs, config=config)
    return program


def _limit(exc: BaseException) -> RuntimeLimit:
    return RuntimeLimit(LIMIT, f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}")


def run(program_manager: Any, inputs: dict) -> list[torch.Tensor]:
    """The program's `USER_OUTPUT` tensors; raises `RuntimeLimit` where the seed returns None.

    Inputs bind positionally against the declared slots: each tensor slot takes the eager leaf of
    its declared shape (a wrong-shape tensor crashes conv/copy kernels), falling back to the next
    unused leaf under dynamic shapes, where the declared shape is an upper bound.
    """
    set_seed(1234)
    leaves = torch.utils._pytree.tree_leaves(inputs)
    # The runtime rejects non-contiguous inputs. `int` covers `bool`.
    tensors = [t.contiguous() for t in leaves if isinstance(t, torch.Tensor)]
    scalars = (t for t in leaves if isinstance(t, (int, float)))
    with _runtime_limits():
        program = Runtime.get().load_program(program_manager.buffer, verification=Verification.Minimal)
        method = program.load_method("forward")
    args = _bind(method, tensors, scalars)
    with _runtime_limits():
        outputs = method.execute(args)
    return _user_outputs(program_manager, outputs)


@contextmanager
def _runtime_limits() -> Iterator[None]:
    """Raises `RuntimeLimit` for an error the seed counts as the runtime's limit; any other propagates."""
    try:
        yield
    except (RuntimeError, MemoryError) as exc:
        if is_runtime_limit(exc):
            raise _limit(exc) from exc
        raise


def _bind(method: Any, tensors: list[torch.Tensor], scalars: Iterator[Any]) -> list[Any]:
    """One argument per declared input slot: see `run`."""
    args = []
    for index in range(method.metadata.num_inputs()):
        try:
            shape = tuple(method.metadata.input_tensor_meta(index).sizes())
        except Exception:  # a non-tensor slot
            args.append(next(scalars, None))
        else:
            match = next((t for t in tensors if tuple(t.shape) == shape), tensors[0] if tensors else None)
            if match is not None:
                tensors.remove(match)
            args.append(match)
        if args[-1] is None:
            raise RuntimeLimit("executorch-inputs", f"input slot {index} has no eager leaf to bind (a derived symint?)")
    return args


def _user_outputs(program_manager: Any, outputs: list[Any]) -> list[torch.Tensor]:
    # `torch.export` appends mutated inputs to the outputs: keep the model's USER_OUTPUTs only.
    kinds = [spec.kind.name for spec in _exported_program(program_manager).graph_signature.output_specs]
    if len(kinds) == len(outputs):
        outputs = [out for out, kind in zip(outputs, kinds) if kind == "USER_OUTPUT"]
    return [out for out in outputs if isinstance(out, torch.Tensor)]


def _exported_program(program_manager: Any) -> Any:
    exported_program = program_manager.exported_program
    return exported_program() if callable(exported_program) else exported_program


DELEGATE_CALL = "executorch_call_delegate"
# Not ops of the model: tuple unpacking, and the memory planner's buffers (`memory.alloc`).
BOOKKEEPING = frozenset({"getitem", "alloc"})


def measure(program_manager: Any) -> dict[str, float]:
    """The .pte's size, and the program's ops: lowered into a delegate (XNNPACK, MLX) or left to the portable kernels.

    A delegate call stands for the ops it lowered: they are counted in the lowered module's own
    graph (`original_module`), so the two counts add up to the ops of the program.
    """
    module = _exported_program(program_manager).graph_module
    delegated = undelegated = 0
    for node in module.graph.nodes:
        if node.op != "call_function" or _name(node.target) in BOOKKEEPING:
            continue
        if DELEGATE_CALL not in _name(node.target):
            undelegated += 1
            continue
        lowered = getattr(module, str(node.args[0].target), None) if node.args else None
        original = getattr(lowered, "original_module", None)
        inner = original.graph.nodes if original is not None else ()
        delegated += sum(n.op == "call_function" and _name(n.target) not in BOOKKEEPING for n in inner) or 1
    return {
        "artifact_bytes": float(len(program_manager.buffer)),
        "delegated_nodes": float(delegated),
        "undelegated_nodes": float(undelegated),
    }


def _name(target: Any) -> str:
    return getattr(target, "__name__", str(target))
