"""The table's config file: the documented example loads, mistakes are named."""
from __future__ import annotations

import pytest

from companion.table.config import ConfigError, TableConfig


def test_the_documented_example_loads_with_its_defaults():
    config = TableConfig.load("examples/table.toml")
    assert (config.table_id, config.port, config.variant, config.view) == ("table-1", 8000, "perudo", "above")
    assert config.colours[:3] == ["red", "blue", "green"]
    assert config.panel["dudo"] == 17 and config.camera["backend"] == "simulated"
    assert TableConfig().colours == config.colours


@pytest.mark.parametrize("text, words", [
    ("[table]\nprt = 80\n", "unknown key 'prt' in [table]"),
    ("[tabel]\nport = 80\n", "unknown config key 'tabel'"),
    ("[table]\npin = \"12ab\"\n", "PIN must be 4 to 12 digits"),
    ("[table]\nport = 99999\n", "port must be"),
    ("[seats]\ncolours = [\"red\", \"pink\"]\n", "unknown seat colour(s) pink"),
    ("[seats]\ncolours = [\"red\", \"red\"]\n", "must not repeat"),
    ("[camera]\nview = \"side\"\n", "view must be 'above' or 'below'"),
    ("[table\n", "not valid TOML"),
])
def test_config_mistakes_are_named(tmp_path, text, words):
    path = tmp_path / "table.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as error:
        TableConfig.load(path)
    assert words in str(error.value)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match="config file not found"):
        TableConfig.load(tmp_path / "nope.toml")


def test_the_pin_is_made_once_and_kept(tmp_path):
    config = TableConfig(data_dir=str(tmp_path))
    pin, generated = config.resolve_pin()
    assert generated and len(pin) == 4 and pin.isdigit()
    assert config.resolve_pin() == (pin, True)
    assert TableConfig(data_dir=str(tmp_path), pin="98765").resolve_pin() == ("98765", False)
