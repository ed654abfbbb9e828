"""The table PIN: who may change the table's state, and how guessing it is made hopeless.

A request is allowed when the browser's session is logged in (`session["table_auth"]`) or it
carries the PIN in the `X-Table-Pin` header. Wrong PINs are counted per client address: after
FREE_TRIES wrong ones each further try must wait longer (429 with Retry-After: 1, 2, 4, ... s),
and after LOCK_AFTER wrong ones the client is locked out for LOCK_SECONDS (423), the right PIN
included. With the defaults a 4-digit PIN takes on average over 200 hours of guessing.
"""
from __future__ import annotations

import functools
import hmac
import math
import threading
import time
from dataclasses import dataclass

from flask import current_app, jsonify, request, session

FREE_TRIES = 3
LOCK_AFTER = 10
LOCK_SECONDS = 15 * 60
HEADER = "X-Table-Pin"


@dataclass(frozen=True)
class AuthResult:
    """The answer to a PIN attempt; `status` is the HTTP status to answer with when not ok."""

    ok: bool
    status: int = 200
    message: str = ""
    retry_after: int = 0


class PinGuard:
    """Checks PINs and keeps the per-client count of wrong ones (thread-safe)."""

    def __init__(self, pin: str, clock=time.monotonic, free_tries: int = FREE_TRIES,
                 lock_after: int = LOCK_AFTER, lock_seconds: float = LOCK_SECONDS):
        self.pin = str(pin)
        self._clock = clock
        self.free_tries = free_tries
        self.lock_after = lock_after
        self.lock_seconds = lock_seconds
        self._lock = threading.Lock()
        self._failures: dict[str, tuple[int, float]] = {}   # client -> (wrong tries, last try)

    def attempt(self, client: str, pin: str) -> AuthResult:
        with self._lock:
            now = self._clock()
            failures, last = self._failures.get(client, (0, 0.0))
            if failures >= self.lock_after:
                left = last + self.lock_seconds - now
                if left > 0:
                    return AuthResult(False, 423, "too many wrong PINs: this device is locked out"
                                      f" for {math.ceil(left / 60)} min", math.ceil(left))
                failures = 0   # the lock-out is over: start counting afresh
            elif failures >= self.free_tries:
                wait = 2 ** (failures - self.free_tries) - (now - last)
                if wait > 0:
                    return AuthResult(False, 429, f"too many wrong PINs: wait {math.ceil(wait)} s"
                                      " before trying again", math.ceil(wait))
            if hmac.compare_digest(str(pin).encode(), self.pin.encode()):
                self._failures.pop(client, None)
                return AuthResult(True)
            failures += 1
            self._failures[client] = (failures, now)
            if failures >= self.lock_after:
                return AuthResult(False, 423, "wrong PIN; too many wrong PINs: this device is"
                                  f" locked out for {int(self.lock_seconds) // 60} min",
                                  int(self.lock_seconds))
            return AuthResult(False, 401, "wrong PIN")


def guard() -> PinGuard:
    return current_app.extensions["companion"]["auth"]


def _client() -> str:
    return request.remote_addr or "unknown"


def is_authorised() -> bool:
    """True when this browser session is logged in (no PIN check, nothing counted)."""
    return bool(session.get("table_auth"))


def login(pin: str) -> AuthResult:
    """Check a PIN from the pages' login form; on success the session is logged in."""
    result = guard().attempt(_client(), pin or "")
    if result.ok:
        session["table_auth"] = True
        session.permanent = True
    return result


def logout() -> None:
    session.pop("table_auth", None)


def error_response(result: AuthResult):
    response = jsonify({"error": result.message})
    response.status_code = result.status
    if result.retry_after:
        response.headers["Retry-After"] = str(result.retry_after)
    return response


def require_pin(view):
    """Decorator for state-changing views: logged-in session, or a right `X-Table-Pin` header."""

    @functools.wraps(view)
    def wrapper(*args, **kwargs):
        if is_authorised():
            return view(*args, **kwargs)
        pin = request.headers.get(HEADER)
        if pin is None:
            return error_response(AuthResult(False, 401, "the table PIN is needed: send it in"
                                             f" the {HEADER} header or log in on the page"))
        result = guard().attempt(_client(), pin)
        if not result.ok:
            return error_response(result)
        return view(*args, **kwargs)

    return wrapper
