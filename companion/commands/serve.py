"""`companion serve`: run the table (camera, buttons, web page and API) with waitress.

With no options it runs a whole table on a laptop: simulated camera, no GPIO, data in
./companion-data and a PIN it makes up once and prints. `--config table.toml` describes a real
Pi (see examples/table.toml); `--pin`, `--port`, `--host` and `--data-dir` override the file.
SIGTERM (systemd stop) and Ctrl+C shut it down cleanly: live feeds end, the camera and GPIO
are released, and every acknowledged event is already on disk.
"""
from __future__ import annotations

import argparse
import logging
import signal
import socket
import sys
from pathlib import Path

from companion.table.config import ConfigError, TableConfig
from companion.table.store import StoreError


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "serve", help="run the table: camera, buttons, LEDs, web page and API",
        description="Run the table companion: the page for phones and the JSON API, the camera"
                    " and the panel. With no options: simulated camera, no GPIO, data in"
                    " ./companion-data, a printed PIN.")
    parser.add_argument("--config", type=Path, help="table config file (TOML, see examples/table.toml)")
    parser.add_argument("--pin", help="table PIN for changes (4-12 digits)")
    parser.add_argument("--port", type=int, help="TCP port (default 8000; 0 picks a free one)")
    parser.add_argument("--host", help="address to listen on (default 0.0.0.0: the whole LAN)")
    parser.add_argument("--data-dir", type=Path, help="folder for the event log (default ./companion-data)")
    parser.set_defaults(func=run)


def load_config(args: argparse.Namespace) -> TableConfig:
    config = TableConfig.load(args.config) if args.config else TableConfig()
    if args.pin is not None:
        config.pin = args.pin
    if args.port is not None:
        config.port = args.port
    if args.host is not None:
        config.host = args.host
    if args.data_dir is not None:
        config.data_dir = str(args.data_dir)
    config.validate()
    return config


def lan_addresses() -> list[str]:
    """This machine's addresses that phones on the same network can reach (no packet is sent)."""
    from companion.web.pages import lan_ip

    found = [lan_ip()]
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            found.append(info[4][0])
    except OSError:
        pass
    return [a for a in dict.fromkeys(found) if not a.startswith("127.")]


def run(args: argparse.Namespace) -> int:
    import waitress

    from companion.web import create_app

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)
    try:
        config = load_config(args)
        app = create_app(config)
    except (ConfigError, ValueError, OSError, StoreError) as exc:
        print(f"companion serve: {exc}", file=sys.stderr)
        return 2
    table = app.extensions["companion"]
    controller = table["controller"]
    try:
        server = waitress.create_server(app, host=config.host, port=config.port,
                                        threads=config.threads, ident="companion")
    except OSError as exc:
        table["close"]()
        print(f"companion serve: cannot listen on {config.host}:{config.port}: {exc.strerror}",
              file=sys.stderr)
        return 2

    def stop(signum, frame):
        controller.end_feeds()   # live pages let go, so waitress's threads can finish
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    port = server.effective_port
    print("Perudo table companion is running.")
    print(f"  On this computer:        http://localhost:{port}/")
    if config.host in ("0.0.0.0", "::", ""):
        for address in lan_addresses():
            print(f"  Phones on this network:  http://{address}:{port}/")
    else:
        print(f"  Listening on:            http://{config.host}:{port}/")
    pin_note = "made up once and kept in the data folder; set your own with --pin" \
        if table["pin_generated"] else "from the config"
    print(f"  Table PIN: {table['pin']}   ({pin_note})")
    # open_panel has already logged why there is no panel; the summary doesn't say it again.
    panel = "none" if getattr(controller.panel, "reason", None) else "buttons and LEDs on GPIO"
    print(f"  Camera: {getattr(controller.camera, 'name', 'none')}; panel: {panel}")
    print(f"  Data: {Path(config.data_dir).resolve()}")
    print("Stop with Ctrl+C.", flush=True)
    try:
        server.run()   # returns after SIGTERM/SIGINT, having closed the server
    finally:
        table["close"]()
    print("companion serve: stopped", flush=True)
    return 0
