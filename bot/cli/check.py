"""`export-bot check`: the main job in one command — select, run, diff, confirm, report, propose."""

from __future__ import annotations

from pathlib import Path

import click

from bot.cli.common import BotError, handle_errors, resolve_skiplists, verdict_exit, verify_tested_transformers
from bot.cli.options import FOLDER, config_option, junit_paths_option
from bot.cli.run_options import models_options, run_options


@click.command()
@models_options(" instead of the preset", " (default: smoke, unless --models or --base)")
@click.option("--base", "base_ref", default=None, help="Select the cells from the git diff BASE...HEAD of --repo.")
@click.option("--head", "head_ref", default="HEAD", show_default=True, help="With --base: the head ref.")
@click.option(
    "--repo",
    type=FOLDER,
    default=Path("."),
    show_default=True,
    help="With --base: the Transformers-layout git repository to select from. "
    "Its pyproject.toml holds the settings (with --base: at the base, as a PR is judged), unless --config names another.",
)
@config_option()
@junit_paths_option(
    "--base-junit", "base_junit", "Main's JUnit to diff against (repeat); without it the skiplists alone judge the run."
)
@run_options(workers="2")
@click.option(
    "--out",
    type=FOLDER,
    default=Path("export-bot-out"),
    show_default=True,
    help="Where report.json, the markdown, the patch and the JUnit go.",
)
@handle_errors
def check(models, preset, base_ref, head_ref, repo, config, base_junit, skiplists_dir, checkout, **options) -> None:
    """Run the conformance check locally, as the PR workflow does, and print the verdict.

    Exit 0 for success (or neutral: incomplete results, said loudly), 1 for failure, 2 for bad input.
    """
    from bot.jobs.check import CheckOptions, check_settings, run_check

    if base_ref and (models or preset):
        raise BotError("--base selects the cells from the git diff; leave out --models and --preset")
    # One pyproject for everything the check decides: the selection, the source, the skiplists.
    settings = check_settings(repo, config, base_ref, head_ref)
    verify_tested_transformers(checkout, options["source"] or settings.source, repo)
    matrix = {key: tuple(value) if key in ("backends", "shapes") else value for key, value in options.items()}
    check_options = CheckOptions(
        models=tuple(models),
        preset=preset if (preset or models or base_ref) else "smoke",
        base_ref=base_ref,
        head_ref=head_ref,
        repo=repo,
        base_junit=tuple(base_junit),
        skiplists=resolve_skiplists(skiplists_dir, settings),
        settings=settings,
        **matrix,
    )
    outcome = run_check(check_options, echo=lambda line: click.echo(line, err=True))
    _echo_outcome(outcome, check_options.out / "report.json")
    if outcome.nothing_built:
        why = outcome.report.setup_headline or "every cell is a build error (see junit.xml)"
        raise BotError(f"nothing could be built; {why}. Fix the checkout's test setup, then run again")
    raise SystemExit(verdict_exit(outcome.report.verdict))


def _echo_outcome(outcome, report_path: Path) -> None:
    """The comment and the patch on stdout, as the PR would get them; the verdict and the files written on stderr."""
    click.echo(outcome.comment)
    if outcome.patch:
        click.echo(f"\nProposed skiplist patch (`export-bot propose --report {report_path} --apply` writes it):\n")
        click.echo(outcome.patch, nl=False)
    click.echo(f"\nverdict: {outcome.report.verdict}: {outcome.report.headline}", err=True)
    click.echo(f"wrote {', '.join(str(p) for p in outcome.written)}", err=True)
