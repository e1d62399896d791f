"""Zoo coverage: for every catalogued class, did it build, did eager run, or why not (stage and reason).

The sweep runs in worker subprocesses over chunks of classes, so a crash, a hang or a leak in one
model costs that chunk's remainder a restart, never the sweep. Workers write one JSON line per
class; the parent reads them back (a class a worker died on is recorded as `crashed`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from bot.files import read_text

STAGES = ("catalogue", "config", "size", "inputs", "eager")
OK = "ok"
NOT_BUILDABLE = "not-buildable"
ERROR = "error"
CRASHED = "crashed"
CLASS_TIMEOUT = 120  # seconds for one class's build and eager forward in a worker


@dataclass(frozen=True)
class Result:
    """One class's coverage: status ok / not-buildable / error / crashed, and where and why it stopped."""

    model_class: str
    model_type: str
    family: str
    status: str
    stage: str | None = None
    reason: str | None = None
    parameters: int | None = None
    seconds: float = 0.0
    generate: str | None = None  # for generative classes: "ok" or the generate failure

    @property
    def ran_eager(self) -> bool:
        return self.status == OK


def check_class(model_class: str, *, generate: bool = False) -> Result:
    """Build `model_class` through the zoo source and run one eager forward (imports torch)."""
    import torch

    from bot.models.catalog import load
    from bot.models.sources.base import NotBuildable
    from bot.models.sources.zoo.source import ZooSource

    entry = load().get(model_class)
    model_type, family = (entry.model_type, entry.family) if entry else ("?", "?")
    start = time.monotonic()

    def result(status: str, stage: str | None = None, reason: str | None = None, **extra) -> Result:
        return Result(
            model_class, model_type, family, status, stage, reason, seconds=round(time.monotonic() - start, 3), **extra
        )

    source = ZooSource()
    try:
        built = source.build(model_class, generate=False)
    except NotBuildable as exc:
        return result(NOT_BUILDABLE, _stage_of(exc), _one_line(exc))
    except Exception as exc:
        return result(ERROR, _stage_of(exc), _one_line(exc))
    from bot.models.sources.zoo.build import parameters_on_meta

    try:
        parameters = parameters_on_meta(built.model_class, built.config)
        model = built.model_class(built.config).eval()
        with torch.no_grad():
            model(**built.inputs)
    except Exception as exc:
        return result(ERROR, "eager", _one_line(exc))
    gen = None
    if generate and entry is not None and entry.generative:
        gen = _check_generate(source, model_class)
    return result(OK, parameters=parameters, generate=gen)


def _check_generate(source, model_class: str) -> str:
    import torch

    try:
        built = source.build(model_class, generate=True)
        model = built.model_class(built.config).eval()
        with torch.no_grad():
            model.generate(**built.inputs, max_new_tokens=2, do_sample=False)
    except Exception as exc:
        return _one_line(exc)
    return OK


def _stage_of(exc: BaseException) -> str:
    text = str(exc)
    if "fails with its own defaults" in text or "rejected the tiny sizes" in text:
        return "config"
    if "parameters at the zoo's smallest" in text or "cannot be built from the tiny config" in text:
        return "size"
    if "auto mapping" in text or "exports no class" in text:
        return "catalogue"
    return "inputs"


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:300]}" if not text.startswith(type(exc).__name__) else text[:300]


# ---------------------------------------------------------------------------------------------
# The sweep: chunks of classes in worker subprocesses


def worker_main(argv: Sequence[str]) -> int:
    """`python -m bot.models.sources.zoo.coverage OUT.jsonl [--generate] CLASS...`: one JSON line per class."""
    import signal

    out, rest = argv[0], list(argv[1:])
    generate = "--generate" in rest
    names = [n for n in rest if n != "--generate"]

    def timeout(signum, frame):
        raise TimeoutError(f"over {CLASS_TIMEOUT} s")

    signal.signal(signal.SIGALRM, timeout)
    import torch

    torch.set_num_threads(1)
    with open(out, "a", encoding="utf-8") as stream:
        for name in names:
            signal.alarm(CLASS_TIMEOUT)
            try:
                result = check_class(name, generate=generate)
            except TimeoutError as exc:
                result = Result(name, "?", "?", ERROR, "eager", f"TimeoutError: {exc}")
            finally:
                signal.alarm(0)
            stream.write(json.dumps(asdict(result)) + "\n")
            stream.flush()
    return 0


def sweep(
    names: Sequence[str],
    out: Path,
    *,
    chunk: int = 40,
    generate: bool = False,
    nice: int = 10,
    log=None,
) -> list[Result]:
    """Check `names` in worker subprocesses of `chunk` classes each; resumes from what `out` already holds."""
    done = {r.model_class: r for r in read_results(out)} if out.exists() else {}
    todo = [n for n in names if n not in done]
    while todo:
        batch, todo = todo[:chunk], todo[chunk:]
        proc = _run_worker(batch, out, generate=generate, nice=nice)
        finished = {r.model_class for r in read_results(out)}
        left = [n for n in batch if n not in finished]
        if left:
            # The worker died on left[0]: record it and go on with the rest of its chunk.
            _record_crash(out, left[0], proc)
            todo = left[1:] + todo
        if log:
            log(len(names) - len(todo), len(names))
    order = {n: i for i, n in enumerate(names)}
    return sorted((r for r in read_results(out) if r.model_class in order), key=lambda r: order[r.model_class])


def _run_worker(batch: Sequence[str], out: Path, *, generate: bool, nice: int) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "bot.models.sources.zoo.coverage", str(out)]
    command += ["--generate"] if generate else []
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    return subprocess.run(
        ["nice", "-n", str(nice), *command, *batch], env=env, capture_output=True, text=True, check=False
    )


def _record_crash(out: Path, name: str, proc: subprocess.CompletedProcess) -> None:
    """`name` as crashed, with the last line the worker wrote to stderr (or its exit code)."""
    tail = (proc.stderr or "").strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
    crashed = Result(name, "?", "?", CRASHED, "eager", f"worker died: {tail[0][:200]}")
    with open(out, "a", encoding="utf-8") as stream:
        stream.write(json.dumps(asdict(crashed)) + "\n")


def read_results(path: Path) -> list[Result]:
    results: dict[str, Result] = {}
    for line in read_text(path).splitlines():  # bot.files: a FIFO or a device is refused, not read forever
        if line.strip():
            row = json.loads(line)
            results[row["model_class"]] = Result(**row)
    return list(results.values())


# ---------------------------------------------------------------------------------------------
# The summary


@dataclass(frozen=True)
class Summary:
    total: int
    ran: int
    types_total: int
    types_ran: int
    by_family: dict[str, tuple[int, int]]  # family → (ran, total)
    by_status: dict[str, int]
    reasons: list[tuple[str, str, int, list[str]]]  # (stage, reason pattern, count, examples)

    @property
    def percent(self) -> float:
        return 100.0 * self.ran / self.total if self.total else 0.0


_VOLATILE = re.compile(r"\d+(\.\d+)?|'[^']*'|\"[^\"]*\"|\([^)]*\)|\[[^\]]*\]")


def reason_pattern(reason: str) -> str:
    """A failure reason with its numbers, quoted names and shapes blanked, so alike failures group."""
    return _VOLATILE.sub("…", reason or "")[:140]


def summarize(results: Iterable[Result]) -> Summary:
    results = list(results)
    families: dict[str, list[int]] = {}
    types: dict[str, bool] = {}
    for r in results:
        counts = families.setdefault(r.family, [0, 0])
        counts[1] += 1
        counts[0] += r.ran_eager
        types[r.model_type] = types.get(r.model_type, False) or r.ran_eager
    groups: dict[tuple[str, str], list[str]] = {}
    for r in results:
        if not r.ran_eager:
            groups.setdefault((r.stage or "?", reason_pattern(r.reason or "")), []).append(r.model_class)
    reasons = sorted(((s, p, len(v), v[:3]) for (s, p), v in groups.items()), key=lambda x: -x[2])
    return Summary(
        total=len(results),
        ran=sum(r.ran_eager for r in results),
        types_total=len(types),
        types_ran=sum(types.values()),
        by_family={f: (c[0], c[1]) for f, c in sorted(families.items())},
        by_status=dict(Counter(r.status for r in results)),
        reasons=reasons,
    )


def markdown(summary: Summary, *, transformers_version: str, top: int = 25) -> str:
    """The coverage table in the job summary's style: the figure, by family, then by failure reason."""
    lines = [
        f"### Zoo coverage: transformers {transformers_version}",
        "",
        f"**{summary.ran} / {summary.total}** catalogued model classes build and run eager "
        f"(**{summary.percent:.1f} %**), in **{summary.types_ran} / {summary.types_total}** model types.",
        "",
        "| family | build + eager | classes | % |",
        "|---|---:|---:|---:|",
    ]
    for family, (ran, total) in summary.by_family.items():
        lines.append(f"| {family} | {ran} | {total} | {100.0 * ran / total:.0f} |")
    lines += ["", "| status | classes |", "|---|---:|"]
    lines += [f"| {status} | {count} |" for status, count in sorted(summary.by_status.items())]
    lines += ["", f"**Top failure reasons** ({min(top, len(summary.reasons))} of {len(summary.reasons)})", ""]
    lines += ["| stage | reason | classes | e.g. |", "|---|---|---:|---|"]
    for stage, pattern, count, examples in summary.reasons[:top]:
        cell = pattern.replace("|", "\\|")
        lines.append(f"| {stage} | {cell} | {count} | {', '.join(examples)} |")
    return "\n".join(lines) + "\n"


def as_json(summary: Summary, results: Sequence[Result], *, transformers_version: str) -> dict:
    return {
        "transformers": transformers_version,
        "total": summary.total,
        "ran_eager": summary.ran,
        "percent": round(summary.percent, 2),
        "model_types": {"total": summary.types_total, "ran_eager": summary.types_ran},
        "by_family": {f: {"ran_eager": r, "total": t} for f, (r, t) in summary.by_family.items()},
        "by_status": summary.by_status,
        "reasons": [{"stage": s, "reason": p, "count": c, "examples": e} for s, p, c, e in summary.reasons],
        "classes": [asdict(r) for r in results],
    }


if __name__ == "__main__":
    sys.exit(worker_main(sys.argv[1:]))
