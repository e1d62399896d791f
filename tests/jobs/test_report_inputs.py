"""`report`, `diff` and `check` build their report inputs alike: what the settings decide comes from the settings."""

from __future__ import annotations

from pathlib import Path

from bot.jobs.report import ReportInputs, drift_rule
from bot.settings import Settings


def test_the_settings_decide_age_flakiness_drift_and_source():
    settings = Settings(source="transformers-tests:/src", stale_days=3.0, flaky_window=4, drift_time_factor=9.0)
    inputs = ReportInputs.under(settings, head=(Path("head.xml"),))
    assert (inputs.source, inputs.stale_days, inputs.flaky_window) == ("transformers-tests:/src", 3.0, 4)
    assert inputs.drift == drift_rule(settings) and inputs.drift.time_factor == 9.0


def test_what_the_job_gives_wins_over_the_settings():
    # `check` names the source its plan ran, which may be a --checkout rather than the settings' source.
    inputs = ReportInputs.under(Settings(source="zoo"), head=(), source="transformers-tests:/co", stale_days=1.0)
    assert (inputs.source, inputs.stale_days) == ("transformers-tests:/co", 1.0)
