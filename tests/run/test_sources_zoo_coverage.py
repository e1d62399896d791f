"""Zoo coverage and shrinking: the sweep in worker processes, its summary, and the pure sizing rules."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bot.models import catalog
from bot.models.sources.zoo import coverage as cov
from bot.models.sources.zoo.shrink import LEVELS, _kept_layers, _scaled_list, _Tokens

pytest.importorskip("torch")


def test_special_token_ids_map_into_the_vocabulary_consistently():
    tokens = _Tokens(99)
    assert tokens.remap(2) == 2  # already inside: kept
    eos, bos = tokens.remap(50256), tokens.remap(50257)
    assert eos == 98 and bos == 97
    assert tokens.remap(50256) == eos  # the same id maps the same way everywhere in the tree
    assert tokens.remap(98 + 100_000) == 96


def test_channel_lists_shrink_by_one_ratio_so_stages_still_connect():
    ins, outs = [32, 16, 24, 40, 80, 112, 192], [16, 24, 40, 80, 112, 192, 320]
    ratio = 320 / 32
    new_in, new_out = _scaled_list(ins, ratio), _scaled_list(outs, ratio)
    assert all(new_in[i + 1] == new_out[i] for i in range(len(ins) - 1))
    assert max(new_out) == 32


def test_hybrid_models_keep_one_layer_of_every_kind():
    values = {"layer_types": ["linear"] * 3 + ["full"] + ["linear"] * 3 + ["full"], "num_hidden_layers": 8}
    kept = _kept_layers(values, 8, 2)
    assert [values["layer_types"][i] for i in kept] == ["linear", "full"]
    assert _kept_layers({"layer_types": ["a"] * 8}, 8, 2) == [0, 1]


def test_levels_shrink():
    assert LEVELS[0].width > LEVELS[-1].width and LEVELS[0].layers >= LEVELS[-1].layers


def test_sweep_checks_classes_in_workers_and_summarizes(tmp_path):
    out = tmp_path / "coverage.jsonl"
    results = cov.sweep(["BertModel", "NoSuchModel", "ViTModel"], out, chunk=2, nice=0)
    by_name = {r.model_class: r for r in results}
    assert [r.model_class for r in results] == ["BertModel", "NoSuchModel", "ViTModel"]
    assert by_name["BertModel"].status == cov.OK and by_name["BertModel"].parameters > 0
    assert by_name["NoSuchModel"].status == cov.NOT_BUILDABLE and by_name["NoSuchModel"].stage == "catalogue"
    # A rerun resumes: nothing is checked again.
    lines = out.read_text().splitlines()
    cov.sweep(["BertModel", "NoSuchModel", "ViTModel"], out, chunk=2, nice=0)
    assert out.read_text().splitlines() == lines
    summary = cov.summarize(results)
    assert (summary.total, summary.ran) == (3, 2)
    table = cov.markdown(summary, transformers_version="5.x")
    assert "**2 / 3** catalogued model classes build and run eager" in table
    assert "| catalogue | NotBuildable: NoSuchModel is not in any auto mapping" in table


def test_summary_groups_failures_by_reason_pattern():
    rows = [
        cov.Result("A", "a", "vision", cov.ERROR, "eager", "RuntimeError: size 3 vs 4"),
        cov.Result("B", "b", "vision", cov.ERROR, "eager", "RuntimeError: size 5 vs 8"),
        cov.Result("C", "c", "decoder", cov.OK),
    ]
    summary = cov.summarize(rows)
    assert summary.reasons[0][:3] == ("eager", "RuntimeError: size … vs …", 2)
    assert summary.by_family == {"decoder": (1, 1), "vision": (0, 2)}
    data = cov.as_json(summary, rows, transformers_version="5.x")
    assert data["percent"] == pytest.approx(33.33) and data["model_types"] == {"total": 3, "ran_eager": 1}


def test_zoo_coverage_command(tmp_path):
    from bot.cli import main

    results, summary = tmp_path / "r.jsonl", tmp_path / "summary.md"
    outcome = CliRunner().invoke(
        main,
        ["zoo", "coverage", "--classes", "BertModel", "--results", str(results), "--json", str(tmp_path / "c.json")]
        + ["--summary", str(summary), "--min-percent", "100"],
    )
    assert outcome.exit_code == 0, outcome.output
    assert "**1 / 1**" in outcome.output and summary.read_text().startswith("### Zoo coverage")
    assert json.loads((tmp_path / "c.json").read_text())["ran_eager"] == 1
    bad = CliRunner().invoke(main, ["zoo", "coverage", "--classes", "Nope", "--results", str(results)])
    assert bad.exit_code == 2 and "Nope not in any auto mapping" in bad.output


def test_unmapped_model_classes_take_their_config_model_type():
    classes = {
        "dpr": ("DPRQuestionEncoder", "DPRReader"),
        "gpt2": ("GPT2DoubleHeadsModel",),
        "bark": ("BarkFineModel",),
    }
    configs = {"DPRQuestionEncoder": "DPRConfig", "DPRReader": "DPRConfig", "GPT2DoubleHeadsModel": "GPT2Config"}
    configs["BarkFineModel"] = "BarkFineConfig"  # a sub-model config no model type names
    config_types = {"dpr": "DPRConfig", "gpt-sw3": "GPT2Config", "gpt2": "GPT2Config", "bark": "BarkConfig"}
    unmapped = catalog.unmapped_types(classes, configs, config_types, mapped={"DPRQuestionEncoder"})
    assert unmapped == {"DPRReader": "dpr", "GPT2DoubleHeadsModel": "gpt2"}  # the folder's type when several share
    mappings = {"MODEL_MAPPING_NAMES": {"dpr": "DPRQuestionEncoder"}}
    entries = catalog.entries_from_mappings(mappings, unmapped=unmapped)
    assert entries["DPRReader"] == catalog.CatalogEntry("DPRReader", "dpr", "text-encoder", False, ())
    assert entries["DPRQuestionEncoder"].tasks == ("BASE",)
    assert catalog.parse(catalog.dump(catalog.Catalogue(entries, "5.x"))).entries == entries


def test_catalogue_round_trips():
    shipped = catalog.load()
    assert catalog.parse(catalog.dump(shipped)) == shipped
