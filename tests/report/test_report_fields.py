"""report.json's nested objects (provenance, setup problems, failure groups) are checked field by field.

Found by tests/test_fuzz.py: a `true` where a string belongs reached the renderer as an AttributeError.
"""

from __future__ import annotations

import re

import pytest

from bot.diff.model import Report, ReportError

BASE = {"schema": "export-bot/report@1", "verdict": "success", "headline": "x", "baseline": True}
AGE = {"newest": "a" * 40, "behind": 4, "old_cells": 3, "stale_days": 7, "merge_base": "b" * 40}
AGE |= {"merge_base_known": True, "flaky_window": 10}


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"provenance": {"transformers_location": True}}, "provenance.transformers_location"),
        ({"provenance": {"shards_disagree": [1]}}, "provenance.shards_disagree[0]"),
        ({"setup_problems": [{"origin": True}]}, "setup_problems[0].origin"),
        ({"setup_problems": [{"origin": "a", "cells": "3"}]}, "setup_problems[0].cells"),
        ({"groups": [{"signature": "s", "cells": [1]}]}, "groups[0].cells[0]"),
        ({"groups": [{"stage": "export"}]}, "groups[0].signature"),
        ({"groups": [{"signature": "s", "culprit": {"path": 1, "line": 2}}]}, "groups[0].culprit.path"),
        ({"groups": [{"signature": "s", "culprit": {"line": 2}}]}, "groups[0].culprit.path"),
        ({"groups": [{"signature": "s", "hint": {"text": "t"}}]}, "groups[0].hint.id"),
        ({"families": {"BertModel": 3}}, "families.BertModel"),
        ({"baseline_age": {**AGE, "newest": "not-a-sha"}}, "baseline_age.newest"),
        ({"baseline_age": {**AGE, "merge_base": 7}}, "baseline_age.merge_base"),
        ({"baseline_age": {**AGE, "behind": -1}}, "baseline_age.behind"),
        ({"baseline_age": {**AGE, "behind": "4"}}, "baseline_age.behind"),
        ({"baseline_age": {**AGE, "old_cells": 10**12}}, "baseline_age.old_cells"),
        ({"baseline_age": {**AGE, "stale_days": 1e308}}, "baseline_age.stale_days"),
        ({"baseline_age": {**AGE, "flaky_window": 0}}, "baseline_age.flaky_window"),
        ({"baseline_age": {**AGE, "merge_base_known": "yes"}}, "baseline_age.merge_base_known"),
        ({"baseline_age": [AGE]}, "baseline_age"),
        ({"categories": {"flaky": [{"cell": "A::b", "status": "failed", "flips": "2"}]}}, "categories.flaky[0].flips"),
        ({"categories": {"flaky": [{"cell": "A::b", "status": "failed", "flips": -2}]}}, "categories.flaky[0].flips"),
        ({"categories": {"flaky": [{"cell": "A::b", "status": "failed", "flips": True}]}}, "categories.flaky[0].flips"),
        ({"categories": {"broken_trunk": [{"cell": 1, "status": "failed"}]}}, "categories.broken_trunk[0].cell"),
    ],
)
def test_a_wrong_nested_field_is_named(extra, field):
    with pytest.raises(ReportError, match=re.escape(f"field `{field}`")):
        Report.from_json({**BASE, **extra})


def test_valid_nested_fields_are_kept():
    group = {"stage": "export", "signature": "s", "cells": ["BertModel::test_onnx_export_static"]}
    group["culprit"] = {"path": "src/transformers/x.py", "line": 3, "source": "y", "changed": True, "url": None}
    report = Report.from_json({**BASE, "groups": [group], "provenance": {"transformers_version": "5.24.0.dev0"}})
    assert report.groups[0].culprit.line == 3 and report.provenance.transformers_version == "5.24.0.dev0"


def test_a_valid_baseline_age_and_flip_count_are_kept():
    flaky = {"cell": "BertModel::test_onnx_export_static", "status": "failed", "flips": 2}
    report = Report.from_json({**BASE, "baseline_age": AGE, "categories": {"flaky": [flaky]}})
    assert report.baseline_age.to_json() == {**AGE, "stale_days": 7.0}
    assert report.category("flaky")[0].flips == 2
    assert Report.from_json({**BASE, "baseline_age": None}).baseline_age is None
