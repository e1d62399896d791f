"""report.json's nested objects (provenance, setup problems, failure groups) are checked field by field.

Found by tests/test_fuzz.py: a `true` where a string belongs reached the renderer as an AttributeError.
"""

from __future__ import annotations

import re

import pytest

from bot.diff.model import Report, ReportError

BASE = {"schema": "export-bot/report@1", "verdict": "success", "headline": "x", "baseline": True}


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
