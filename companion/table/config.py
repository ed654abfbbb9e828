"""The table's configuration: one TOML file (see examples/table.toml), every key optional.

A laptop runs on the defaults alone (simulated camera, no GPIO, data in ./companion-data); a Pi
names its camera, pins and seats in the file. Unknown keys are refused with their name, so a typo
in the file does not silently fall back to a default.
"""
from __future__ import annotations

import secrets
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping

from vision.types import VIEWS

# Clockwise seat colours used when the config names none: player i plays colour i.
DEFAULT_COLOURS = ("red", "blue", "green", "yellow", "purple", "orange", "white", "black")
KNOWN_COLOURS = DEFAULT_COLOURS
DEFAULT_DATA_DIR = "companion-data"
DB_NAME = "table.sqlite"


class ConfigError(ValueError):
    """The config file or mapping has a problem a person can fix; the message names it."""


@dataclass
class TableConfig:
    """Everything `companion serve` needs, with the defaults a laptop runs on."""

    table_id: str = "table-1"
    pin: str | None = None
    data_dir: str = DEFAULT_DATA_DIR
    host: str = "0.0.0.0"
    port: int = 8000
    language: str = "en"
    threads: int = 24
    variant: str = "perudo"
    options: dict = field(default_factory=dict)
    players: list = field(default_factory=list)
    rolloff: bool = True
    colours: list = field(default_factory=lambda: list(DEFAULT_COLOURS))
    camera: dict = field(default_factory=lambda: {"backend": "simulated", "view": "above"})
    panel: dict = field(default_factory=dict)

    @property
    def view(self) -> str:
        return self.camera.get("view", "above")

    @property
    def db_path(self) -> Path:
        return Path(self.data_dir) / DB_NAME

    @classmethod
    def load(cls, path: str | Path) -> "TableConfig":
        """Read a TOML file; a missing or malformed file raises ConfigError naming it."""
        try:
            with open(path, "rb") as handle:
                data = tomllib.load(handle)
        except FileNotFoundError:
            raise ConfigError(f"config file not found: {path}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
        return cls.from_mapping(data)

    @classmethod
    def from_any(cls, value: "TableConfig | Mapping | str | Path | None") -> "TableConfig":
        if value is None:
            return cls()
        if isinstance(value, TableConfig):
            return value
        if isinstance(value, (str, Path)):
            return cls.load(value)
        return cls.from_mapping(value)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> "TableConfig":
        """Build from the TOML layout ([table], [game], [seats], [camera], [panel]) or flat keys."""
        known = {f.name for f in fields(cls)}
        flat: dict[str, Any] = {}
        sections = {
            "table": {"id": "table_id", "pin": "pin", "data_dir": "data_dir", "host": "host",
                      "port": "port", "language": "language", "threads": "threads"},
            "game": {"variant": "variant", "options": "options", "players": "players",
                     "rolloff": "rolloff"},
            "seats": {"colours": "colours"},
        }
        for key, value in data.items():
            if key in sections:
                if not isinstance(value, Mapping):
                    raise ConfigError(f"[{key}] must be a table of keys")
                for sub, sub_value in value.items():
                    if sub not in sections[key]:
                        raise ConfigError(f"unknown key '{sub}' in [{key}]; known: "
                                          + ", ".join(sorted(sections[key])))
                    flat[sections[key][sub]] = sub_value
            elif key in ("camera", "panel"):
                if not isinstance(value, Mapping):
                    raise ConfigError(f"[{key}] must be a table of keys")
                flat[key] = dict(value)
            elif key in known:
                flat[key] = value
            else:
                raise ConfigError(f"unknown config key '{key}'")
        config = cls(**flat)
        config.validate()
        return config

    def validate(self) -> None:
        if not isinstance(self.table_id, str) or not self.table_id.strip():
            raise ConfigError("table id must be a non-empty string")
        if self.pin is not None:
            self.pin = str(self.pin)
            if not self.pin.isdigit() or not 4 <= len(self.pin) <= 12:
                raise ConfigError("PIN must be 4 to 12 digits")
        if not isinstance(self.port, int) or not 0 <= self.port <= 65535:
            raise ConfigError(f"port must be a number 0-65535, not {self.port!r}")
        if not isinstance(self.threads, int) or self.threads < 4:
            raise ConfigError("threads must be a number of at least 4")
        if not isinstance(self.options, Mapping):
            raise ConfigError("[game.options] must be a table of option = value")
        self.options = dict(self.options)
        if not isinstance(self.players, list) or not all(isinstance(p, str) for p in self.players):
            raise ConfigError("[game] players must be a list of names")
        if (not isinstance(self.colours, list) or not self.colours
                or not all(isinstance(c, str) for c in self.colours)):
            raise ConfigError("[seats] colours must be a list of colour names")
        unknown = [c for c in self.colours if c not in KNOWN_COLOURS]
        if unknown:
            raise ConfigError(f"unknown seat colour(s) {', '.join(unknown)}; known: "
                              + ", ".join(KNOWN_COLOURS))
        if len(set(self.colours)) != len(self.colours):
            raise ConfigError("[seats] colours must not repeat a colour")
        self.camera.setdefault("backend", "simulated")
        self.camera.setdefault("view", "above")
        if self.camera["view"] not in VIEWS:
            raise ConfigError("[camera] view must be 'above' or 'below'")

    def ensure_data_dir(self) -> Path:
        path = Path(self.data_dir)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def resolve_pin(self) -> tuple[str, bool]:
        """The PIN to use and whether it was generated: a configured PIN wins; else a random
        4-digit PIN is made once and kept in the data folder, so a restart keeps it."""
        if self.pin:
            return self.pin, False
        path = self.ensure_data_dir() / "pin"
        if path.exists():
            stored = path.read_text().strip()
            if stored.isdigit():
                return stored, True
        pin = f"{secrets.randbelow(10000):04d}"
        path.write_text(pin + "\n")
        path.chmod(0o600)
        return pin, True

    def secret_key(self) -> bytes:
        """The session signing key, kept in the data folder so phones stay logged in across restarts."""
        path = self.ensure_data_dir() / "secret_key"
        if path.exists() and len(path.read_bytes()) >= 32:
            return path.read_bytes()
        key = secrets.token_bytes(32)
        path.write_bytes(key)
        path.chmod(0o600)
        return key
