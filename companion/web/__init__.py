"""The table's web app: a JSON API (`api.bp`, /api/...) and the players' pages (`pages.bp`).

`create_app` is the factory (flaskr style). Everything the views need sits in
`app.extensions["companion"]`: the `controller` (the only thing they talk to), the table
`config` and the PIN `auth` guard.
"""
from __future__ import annotations

from datetime import timedelta

from flask import Flask

from companion.table.config import TableConfig
from companion.web.auth import PinGuard

MAX_REQUEST_BYTES = 256 * 1024


def create_app(config=None, controller=None, *, pin_factory=None) -> Flask:
    """The Flask app for one table. `config` is a TableConfig, a mapping in the TOML layout, a
    path to a TOML file or None (defaults). Without a `controller` one is opened from the config
    (store, camera, panel) and closed by `app.extensions["companion"]["close"]()`."""
    from companion.table.wiring import close_table, open_table
    from companion.web import api, pages

    table_config = TableConfig.from_any(config)
    app = Flask(__name__)
    app.secret_key = table_config.secret_key()
    app.config.update(
        SESSION_COOKIE_SAMESITE="Lax", SESSION_COOKIE_HTTPONLY=True,
        PERMANENT_SESSION_LIFETIME=timedelta(days=2), MAX_CONTENT_LENGTH=MAX_REQUEST_BYTES,
        JSON_SORT_KEYS=False,
    )
    pin, generated = table_config.resolve_pin()
    owned = controller is None
    if owned:
        controller = open_table(table_config, pin_factory=pin_factory)
    app.extensions["companion"] = {
        "controller": controller, "config": table_config, "auth": PinGuard(pin),
        "pin": pin, "pin_generated": generated,
        "close": (lambda: close_table(controller)) if owned else (lambda: None),
    }
    app.register_blueprint(api.bp)
    app.register_blueprint(pages.bp)
    return app
