"""HTML pages for people at the table: the table view, set-up, history (Flask blueprint)."""
from __future__ import annotations

from flask import Blueprint, render_template

bp = Blueprint("pages", __name__, template_folder="templates", static_folder="static",
               static_url_path="/static/pages")


@bp.get("/")
def table():
    """The table view: players, bag, whose turn, bids; updated live from /api/events."""
    return render_template("table.html")
