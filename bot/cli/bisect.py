"""`export-bot bisect`: name the commit that broke main's cells whose culprit is unknown (docs/baseline.md, "Bisect")."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from bot.cli.common import handle_errors, repository_skiplists
from bot.cli.options import FILE, FOLDER, run_id_option, skiplists_option, state_option


@click.command()
@click.option(
    "--repo",
    required=True,
    type=FOLDER,
    help="A clone of the repository with main's history (each step checks a commit out in a worktree of it).",
)
@state_option(
    "Main's baseline.json; --out gets it with every finished step folded in (it may be the same file).", folder=False
)
@skiplists_option(
    "The default branch's skiplist folder: a skiplisted cell is not bisected (default: [tool.export-bot] skiplists)."
)
@click.option("--max-steps", type=click.IntRange(0, 1000), default=8, show_default=True, help="Commits run at most.")
@click.option(
    "--max-minutes", type=click.FloatRange(0, 24 * 60), default=60.0, show_default=True, help="Wall time at most."
)
@click.option(
    "--run-args",
    default="",
    help='Added to each step\'s `export-bot run --cells … --probe --junit …` (e.g. "-n 0 --source transformers-tests:.").',
)
@click.option(
    "--repeats",
    type=click.IntRange(0, 20),
    default=4,
    show_default=True,
    help="Runs at each end of a range before bisecting, and at the culprit and its parent (0: confirm nothing).",
)
@click.option(
    "--install/--no-install",
    default=False,
    help="`pip install -e` each commit checked out (--no-deps when its setup.py/pyproject.toml/setup.cfg "
    "are those installed last), in this Python; without it, the commit's src/ goes first on PYTHONPATH.",
)
@click.option("--out", required=True, type=FILE, help="The new baseline.json.")
@click.option(
    "--work",
    type=FOLDER,
    default=None,
    help="Where the steps' worktrees and JUnit go (default: a temporary folder).",
)
@run_id_option("Stamps the measurements (GITHUB_RUN_ID).")
@handle_errors
def bisect(
    repo: Path,
    state: Path,
    skiplists_dir: Path | None,
    max_steps: int,
    max_minutes: float,
    run_args: str,
    repeats: int,
    install: bool,
    out: Path,
    work: Path | None,
    run_id: int,
) -> None:
    """Run the broken cells at commits between their last pass and first failure; fold the results into --out."""
    import sys

    from bot.jobs.bisect import BisectInputs, bisect, split_run_args
    from bot.settings import load_settings

    settings = load_settings()
    keep = settings.baseline_history
    with tempfile.TemporaryDirectory(prefix="export-bot-bisect-") as scratch:
        given = BisectInputs(
            repo,
            state,
            repository_skiplists(skiplists_dir, settings),
            out,
            work or Path(scratch),
            max_steps,
            max_minutes,
            split_run_args(run_args),
            run_id,
            keep,
            repeats,
            (sys.executable, "-m", "pip", "install", "--quiet") if install else (),
        )
        outcome = bisect(given)
    for line in outcome.lines:
        click.echo(line)
