"""`[tool.export-bot]` settings: defaults, paths relative to the pyproject, and what a missing folder means."""

from __future__ import annotations

import pytest

from bot.cli.common import DEFAULT_SKIPLISTS, BotError, resolve_skiplists
from bot.settings import Settings, SettingsError, load_settings


def write(tmp_path, body: str):
    path = tmp_path / "pyproject.toml"
    path.write_text(f"[tool.export-bot]\n{body}\n")
    return path


def test_no_pyproject_gives_the_defaults(tmp_path):
    assert load_settings(tmp_path / "pyproject.toml") == Settings()


def test_paths_and_checkout_sources_are_relative_to_the_pyproject(tmp_path):
    settings = load_settings(write(tmp_path, 'skiplists = "lists"\nsource = "transformers-tests:."'))
    assert settings.skiplists == tmp_path / "lists"
    assert settings.source == f"transformers-tests:{tmp_path.resolve()}"
    assert settings.configured == {"skiplists", "source"}


@pytest.mark.parametrize("body", ["typo-key = 1", "dependents = 'yes'", "core = 'BertModel'"])
def test_bad_keys_and_values_name_the_key(tmp_path, body):
    with pytest.raises(SettingsError, match=body.split(" ")[0]):
        load_settings(write(tmp_path, body))


def test_a_configured_skiplist_folder_that_is_missing_is_an_error(tmp_path):
    settings = load_settings(write(tmp_path, 'skiplists = "lists"'))
    with pytest.raises(BotError, match="does not exist"):
        resolve_skiplists(None, settings)
    (tmp_path / "lists").mkdir()
    assert resolve_skiplists(None, settings) == tmp_path / "lists"


def test_without_configuration_the_bots_own_skiplists_serve(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert resolve_skiplists(None) == DEFAULT_SKIPLISTS
    with pytest.raises(BotError, match="no such skiplist folder"):
        resolve_skiplists(tmp_path / "nope")


def test_backends_are_checked_against_the_four(tmp_path):
    assert load_settings(write(tmp_path, 'backends = ["dynamo"]')).backends == ("dynamo",)
    with pytest.raises(SettingsError, match="backends may name only"):
        load_settings(write(tmp_path, 'backends = ["tensorrt"]'))


def test_the_default_skiplists_are_package_data():
    # An installed wheel has them (the repository's skiplists/ links to the same folder).
    assert DEFAULT_SKIPLISTS.parent.name == "data" and (DEFAULT_SKIPLISTS / "export_skips.toml").is_file()
