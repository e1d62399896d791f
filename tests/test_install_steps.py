"""The jobs that run cells install what the checkout's testers import: their install steps, replayed.

Each such job's install steps are read from its workflow (the `run:` steps that call pip, with
their `if:` and `env:`), rendered with the workflow's input defaults, and run in order with bash in
a fresh venv inside the Transformers checkout assembled from upstream's real testers (which live
beside this repository in `../shared/upstream`, as for tests/run/test_parity_upstream.py). The
jobs' sequences are one and the same (asserted), so one replay stands for all of them.

No network: pip takes `.ci/wheelhouse` (scripts/wheelhouse.sh fills it; scripts/test.sh runs it)
and the torch wheel on pip's find-links, with `PIP_NO_INDEX`. Then every tester module is
imported, as pytest's collection would: a module missing there is one setup problem that names
the package to add. Before the last step (the checkout's test needs and the extra packages) the
same import must fail, naming httpx, which these newer testers import and 5.23.0 does not declare.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.rehearsal.expressions import Evaluator
from tests.rehearsal.runner import load_workflow, local_index
from tests.test_workflows import REUSABLE, RUNNER_JOBS

SDIST = ROOT / ".ci" / "cache" / "transformers-5.23.0.tar.gz"
WHEELHOUSE = ROOT / ".ci" / "wheelhouse"
# What a caller of this checkout passes beyond the defaults: upstream's test_configuration_utils
# imports httpx, which the huggingface_hub 5.23.0 resolves to no longer brings.
CALLER_INPUTS = {"extra-packages": "httpx"}
# The import name a tester uses → the package that provides it, where the two differ.
PACKAGES = {"timeout_decorator": "timeout-decorator", "yaml": "pyyaml", "PIL": "pillow", "sklearn": "scikit-learn"}
PROBE = """
import importlib, json, sys
problems = {}
for module in sys.argv[1:]:
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        problems[module] = exc.name
print(json.dumps(problems))
"""

pytestmark = [pytest.mark.rehearsal, pytest.mark.timeout(1200)]


def _upstream() -> Path:
    given = os.environ.get("EXPORT_BOT_UPSTREAM")
    return Path(given) if given else ROOT.parent / "shared" / "upstream"


def _missing() -> str | None:
    if not (_upstream() / "assemble.sh").is_file():
        return f"upstream's real testers are not at {_upstream()} (set EXPORT_BOT_UPSTREAM to their folder)"
    if not SDIST.is_file():
        return f"the transformers 5.23.0 sdist is not at {SDIST} (run: bash scripts/transformers-sdist.sh)"
    if not (WHEELHOUSE / ".complete").is_file():
        return f"no wheelhouse at {WHEELHOUSE} (run: bash scripts/wheelhouse.sh)"
    return None


def install_steps(workflow: str, job: str, inputs: dict) -> list[tuple[str, dict[str, str]]]:
    """The job's pip steps that run with these inputs, in order: (script, env)."""
    data = load_workflow(REUSABLE / f"{workflow}.yml")
    declared = {name: spec.get("default", "") for name, spec in data["on"]["workflow_call"]["inputs"].items()}
    evaluator = Evaluator({"inputs": {**declared, **inputs}, "github": {"event_name": "pull_request"}})
    found = []
    for step in data["jobs"][job]["steps"]:
        if "pip install" in step.get("run", "") and evaluator.condition(step.get("if")):
            env = {key: str(evaluator.render(value)) for key, value in (step.get("env") or {}).items()}
            found.append((step["run"], env))
    return found


def missing_packages(problems: dict[str, str]) -> list[str]:
    """One line per tester module that failed to import: the module it lacked and the package to add."""
    lines = []
    for tester, module in sorted(problems.items()):
        package = PACKAGES.get(module.split(".")[0], module.split(".")[0].replace("_", "-"))
        lines.append(f"{tester}: No module named {module!r}: add `{package}` to the workflow's test-packages input")
    return lines


def test_missing_modules_name_the_package_to_add():
    assert missing_packages({"tests.models.bart.test_modeling_bart": "timeout_decorator", "tests.x": "httpx"}) == [
        "tests.models.bart.test_modeling_bart: No module named 'timeout_decorator': "
        "add `timeout-decorator` to the workflow's test-packages input",
        "tests.x: No module named 'httpx': add `httpx` to the workflow's test-packages input",
    ]


def test_every_job_that_runs_cells_installs_the_same_steps():
    sequences = {job: install_steps(*job, CALLER_INPUTS) for job in RUNNER_JOBS}
    first = sequences[("conformance", "shard")]
    assert len(first) == 4 and all(steps == first for steps in sequences.values()), sequences


def _checkout(tmp_path: Path) -> Path:
    """Upstream's testers on the 5.23.0 sdist, with the bot checked out into `.export-bot` as the jobs do."""
    out = tmp_path / "transformers"
    subprocess.run(["bash", str(_upstream() / "assemble.sh"), str(SDIST), str(out)], check=True, capture_output=True)
    files = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard"], capture_output=True, text=True, check=True
    ).stdout.split()
    for rel in files:
        source = ROOT / rel
        if source.is_file() and not source.is_symlink():
            (out / ".export-bot" / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, out / ".export-bot" / rel)
    return out


def _testers(checkout: Path) -> list[str]:
    paths = sorted((checkout / "tests" / "models").glob("*/test_modeling_*.py"))
    paths += [
        checkout / "tests" / p for p in ("causal_lm_tester.py", "generation/test_utils.py", "exporters/test_export.py")
    ]
    return [".".join(p.relative_to(checkout).with_suffix("").parts) for p in paths]


def _probe(python: Path, checkout: Path, modules: list[str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    result = subprocess.run(
        [str(python), "-c", PROBE, *modules], cwd=checkout, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_install_steps_give_every_tester_module_what_it_imports(tmp_path):
    missing = _missing()
    if missing and os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI replays the install steps, but {missing}")
    if missing:
        pytest.skip(missing)
    checkout = _checkout(tmp_path)
    venv = tmp_path / "venv"
    subprocess.run([str(Path(sys.base_prefix) / "bin" / "python3.11"), "-m", "venv", str(venv)], check=True)
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    find_links = [str(WHEELHOUSE), *os.environ.get("PIP_FIND_LINKS", "").split()]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV") and not k.startswith("PIP_")}
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{env['PATH']}",
        RUNNER_TEMP=str(temp),
        PIP_NO_INDEX="1",  # the network is never asked: every wheel is on disk
        PIP_FIND_LINKS=" ".join(find_links),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_COMPILE="1",  # bytecode changes no import's outcome, and compiling torch's takes a minute
    )
    steps = install_steps("conformance", "shard", CALLER_INPUTS)
    torch_index = local_index(tmp_path / "torch-index", "torch-2.13.0*.whl")
    modules = _testers(checkout)
    assert len(modules) >= 9, modules
    started = time.monotonic()
    for index, (script, step_env) in enumerate(steps):
        if index == len(steps) - 1:
            # Before the test needs: the testers lack what the checkout's tests need (the probe can fail).
            before = _probe(venv / "bin" / "python", checkout, modules)
            assert "httpx" in set(before.values()), before
        if "TORCH_INDEX" in step_env and torch_index:
            step_env = {**step_env, "TORCH_INDEX": torch_index}
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
            cwd=checkout,
            env={**env, **step_env},
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert done.returncode == 0, f"$ {script}\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        print(f"{time.monotonic() - started:.0f} s: {script.strip().splitlines()[-1]}")
    problems = _probe(venv / "bin" / "python", checkout, modules)
    print(f"{time.monotonic() - started:.0f} s: the testers imported")
    assert not problems, "\n".join(missing_packages(problems))
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import transformers; print(transformers.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert where.stdout.startswith(str(checkout / "src")), where.stdout + where.stderr
