"""The tray's buttons and lights, through gpiozero.

Three buttons (DUDO, CALZA, CONFIRM) wired from a GPIO pin to ground, one LED per seat (who
lost a die, who won one back, whose palifico round it is) and a status RGB LED (ready,
capturing, reading, needs a check, verdict, error). Pin numbers are BCM numbers from the
config file. `open_panel` gives a `NoPanel` on a laptop and says so once.

gpiozero is never allowed to pick its mock pins by itself: mock pins are used only when a test
hands a `MockFactory` in as `pin_factory`.
"""
from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Mapping

from gpiozero import LED, PWMLED, RGBLED, Button, Device
from gpiozero.exc import GPIOZeroError, PinFactoryFallback, PinPWMUnsupported
from gpiozero.pins.mock import MockFactory

log = logging.getLogger(__name__)

NO_GPIO = "no GPIO found: running without buttons and LEDs"

DEFAULT_PINS = {
    "dudo": 17,
    "calza": 27,
    "confirm": 22,
    "seats": [5, 6, 13, 19, 26, 12],
    "status_rgb": [16, 20, 21],
}
BUTTONS = ("dudo", "calza", "confirm")
BCM_PINS = range(2, 28)  # the 40-pin header's GPIO2..GPIO27

# What the status LED shows, as (red, green, blue) brightness and how it moves.
STATUS_COLOURS = {
    "ready": (0, 1, 0),          # green
    "capturing": (1, 1, 1),      # white: the camera is taking the photo now
    "reading": (0, 0, 1),        # blue
    "check": (1, 0.5, 0),        # amber, blinking: the table must look at the tray
    "verdict": (0.6, 0, 1),      # purple
    "error": (1, 0, 0),          # red, blinking fast
    "off": (0, 0, 0),
}
BLINKING = {"check": 1.0, "error": 0.5}  # state -> blink half-period, in units of blink_s
STATUSES = tuple(STATUS_COLOURS)
SEAT_STATES = ("lost", "gained", "palifico", "off")


class PanelError(ValueError):
    """The panel's pin configuration is wrong (a pin used twice, not a GPIO number...)."""


def check_pins(dudo, calza, confirm, seats, status_rgb) -> None:
    """Raise PanelError for a configuration that can't be wired; None leaves a part out."""
    uses: dict[int, str] = {}

    def claim(pin, use):
        if pin is None:
            return
        if isinstance(pin, bool) or not isinstance(pin, int) or pin not in BCM_PINS:
            raise PanelError(f"{use}: {pin!r} is not a GPIO number (BCM 2-27)")
        if pin in uses:
            raise PanelError(f"GPIO{pin} is used twice: {uses[pin]} and {use}")
        uses[pin] = use

    for name, pin in (("dudo", dudo), ("calza", calza), ("confirm", confirm)):
        claim(pin, f"{name} button")
    for index, pin in enumerate(seats or ()):
        claim(pin, f"seat {index + 1} LED")
    if status_rgb:
        if len(status_rgb) != 3:
            raise PanelError(f"status_rgb needs three pins (red, green, blue), got {status_rgb!r}")
        for colour, pin in zip(("red", "green", "blue"), status_rgb):
            claim(pin, f"status LED {colour}")


def _check_status(state: str) -> None:
    if state not in STATUS_COLOURS:
        raise ValueError(f"unknown status {state!r}; expected one of {', '.join(STATUSES)}")


def _check_seats(states: Mapping[int, str]) -> None:
    for index, state in states.items():
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise ValueError(f"seat index must be a number from 0, got {index!r}")
        if state not in SEAT_STATES:
            raise ValueError(f"seat {index}: unknown state {state!r}; expected one of {', '.join(SEAT_STATES)}")


class Panel:
    """Buttons and LEDs on real (or test) GPIO pins.

    Button handlers run on gpiozero's event thread; an exception in one is logged and never
    stops the buttons. Pins whose factory has no PWM (gpiozero's native factory) still work:
    the palifico seat blinks slowly instead of pulsing, and colours are mixed on/off.
    """

    def __init__(self, dudo=DEFAULT_PINS["dudo"], calza=DEFAULT_PINS["calza"],
                 confirm=DEFAULT_PINS["confirm"], seats=tuple(DEFAULT_PINS["seats"]),
                 status_rgb=tuple(DEFAULT_PINS["status_rgb"]), *, common_anode: bool = False, bounce_s: float = 0.05,
                 blink_s: float = 0.5, pin_factory=None):
        seats = list(seats or ())
        status_rgb = list(status_rgb or ())
        check_pins(dudo, calza, confirm, seats, status_rgb)
        self.blink_s = float(blink_s)
        self.status = "off"
        self.seats: dict[int, str] = {}
        self._devices = []
        try:
            self._buttons = {name: self._add(Button(pin, pull_up=True, bounce_time=bounce_s,
                                                    pin_factory=pin_factory))
                             for name, pin in (("dudo", dudo), ("calza", calza), ("confirm", confirm))
                             if pin is not None}
            self.pwm = self._pwm_available(seats + status_rgb, pin_factory)
            led_class = PWMLED if self.pwm else LED
            self._seat_leds = [self._add(led_class(pin, pin_factory=pin_factory)) for pin in seats]
            self._status_led = (self._add(RGBLED(*status_rgb, active_high=not common_anode, pwm=self.pwm,
                                                 pin_factory=pin_factory))
                                if status_rgb else None)
        except BaseException:
            self.close()
            raise

    def _add(self, device):
        self._devices.append(device)
        return device

    @staticmethod
    def _pwm_available(pins, pin_factory) -> bool:
        """Whether the pin factory can dim LEDs (lgpio, RPi.GPIO, pigpio and MockPWMPin can)."""
        if not pins:
            return False
        try:
            PWMLED(pins[0], pin_factory=pin_factory).close()
        except PinPWMUnsupported:
            return False
        return True

    def bind(self, on_dudo: Callable[[], object] | None = None, on_calza: Callable[[], object] | None = None,
             on_confirm: Callable[[], object] | None = None) -> None:
        """Call these with no arguments when a button is pressed (None: the button does nothing)."""
        for name, handler in (("dudo", on_dudo), ("calza", on_calza), ("confirm", on_confirm)):
            button = self._buttons.get(name)
            if button is None or (handler is None and button.when_pressed is None):
                continue  # gpiozero warns when an unset handler is cleared
            button.when_pressed = None if handler is None else self._guarded(name, handler)

    @staticmethod
    def _guarded(name: str, handler: Callable[[], object]) -> Callable[[], None]:
        def pressed():
            try:
                handler()
            except Exception:
                log.exception("the %s button's handler failed", name)
        return pressed

    def show_status(self, state: str) -> None:
        """Show a table state on the status LED (see STATUS_COLOURS).

        Showing the state already shown changes nothing, so a blink keeps its rhythm.
        """
        _check_status(state)
        if state == self.status:
            return
        self.status = state
        if self._status_led is None:
            return
        colour = self._colour(STATUS_COLOURS[state])
        if state in BLINKING:
            half = self.blink_s * BLINKING[state]
            self._status_led.blink(on_time=half, off_time=half, on_color=colour, off_color=(0, 0, 0))
        else:
            self._status_led.color = colour

    def _colour(self, rgb: tuple[float, float, float]) -> tuple[float, float, float]:
        """Without PWM a channel is on or off: amber becomes yellow, purple magenta."""
        return rgb if self.pwm else tuple(float(c >= 0.5) for c in rgb)

    def show_seats(self, states: Mapping[int, str]) -> None:
        """Set every seat LED: {seat index (0-based, in seating order): state}.

        Seats not named go off; seats beyond the wired LEDs are ignored (a table may seat more
        players than it has lights).
        """
        _check_seats(states)
        lit = {i: s for i, s in states.items() if i < len(self._seat_leds) and s != "off"}
        for index, led in enumerate(self._seat_leds):
            state = lit.get(index, "off")
            if state != self.seats.get(index, "off"):  # an unchanged pulse keeps its rhythm
                self._light_seat(led, state)
        self.seats = lit

    def _light_seat(self, led, state: str) -> None:
        if state == "lost":
            led.on()
        elif state == "gained":
            led.blink(on_time=self.blink_s, off_time=self.blink_s)
        elif state == "palifico" and self.pwm:
            led.pulse(fade_in_time=2 * self.blink_s, fade_out_time=2 * self.blink_s)
        elif state == "palifico":
            led.blink(on_time=3 * self.blink_s, off_time=3 * self.blink_s)
        else:
            led.off()

    def close(self) -> None:
        """Turn everything off and free the pins."""
        devices, self._devices = self._devices, []
        for device in reversed(devices):
            device.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class NoPanel:
    """The panel of a machine without GPIO: same interface, no lights, no buttons.

    It remembers what it was asked to show, so the page can still tell what the LEDs would say.
    """

    pwm = False

    def __init__(self, reason: str = NO_GPIO):
        self.reason = reason
        self.status = "off"
        self.seats: dict[int, str] = {}

    def bind(self, on_dudo=None, on_calza=None, on_confirm=None) -> None:
        """No buttons: the page's buttons are the only way to call."""

    def show_status(self, state: str) -> None:
        _check_status(state)
        self.status = state

    def show_seats(self, states: Mapping[int, str]) -> None:
        _check_seats(states)
        self.seats = {i: s for i, s in states.items() if s != "off"}

    def close(self) -> None:
        """Nothing to free."""


PI_MODEL_FILE = "/proc/device-tree/model"


def _is_raspberry_pi() -> bool:
    try:
        with open(PI_MODEL_FILE, encoding="ascii", errors="replace") as handle:
            return handle.read().startswith("Raspberry Pi")
    except OSError:
        return False


def _system_pin_factory():
    """gpiozero's own pick of pin library and None, or None and the reason there is none.

    gpiozero warns once per library it fails to load and then raises; those warnings are
    collected here so a laptop prints one line, not five, while a Pi whose pin libraries fail
    (missing python3-lgpio, no permission on /dev/gpiochip0) is told why. Mock pins chosen
    through GPIOZERO_PIN_FACTORY=mock are refused: in production they would silently do nothing.
    """
    with warnings.catch_warnings(record=True) as fallbacks:
        warnings.simplefilter("always", PinFactoryFallback)
        try:
            Device.ensure_pin_factory()
        except Exception as exc:  # BadPinFactory, or a library that loads but finds no chip
            if not _is_raspberry_pi():
                return None, NO_GPIO
            reasons = "; ".join(str(w.message) for w in fallbacks
                                if issubclass(w.category, PinFactoryFallback)) or str(exc)
            return None, (f"no usable GPIO on this Raspberry Pi ({reasons}): install python3-lgpio "
                          "and check the gpio group; running without buttons and LEDs")
    for warning in fallbacks:
        if not issubclass(warning.category, PinFactoryFallback):
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    if isinstance(Device.pin_factory, MockFactory):
        Device.pin_factory.close()
        Device.pin_factory = None
        return None, "GPIOZERO_PIN_FACTORY selects gpiozero's mock pins: running without buttons and LEDs"
    return Device.pin_factory, None


def open_panel(config: Mapping | None = None, *, pin_factory=None) -> Panel | NoPanel:
    """The panel a config section describes ({"dudo": 17, ..., "seats": [...], "status_rgb": [...]}).

    Missing keys take DEFAULT_PINS; a button set to false (or None) and an empty `seats` or
    `status_rgb` list leave that part out;
    `"enabled": false` gives a NoPanel. Bad pin numbers raise PanelError, even on a laptop, so a
    wrong config is caught before it reaches the Pi. Without GPIO (or when the pins can't be
    used) it returns a NoPanel and logs one warning saying why.
    """
    options = dict(config or {})
    enabled = options.pop("enabled", True)
    settings = {"common_anode": options.pop("common_anode", False),
                "bounce_s": options.pop("bounce_s", 0.05),
                "blink_s": options.pop("blink_s", 0.5)}
    unknown = sorted(set(options) - set(DEFAULT_PINS))
    if unknown:
        raise PanelError(f"unknown panel option {', '.join(unknown)}; known: "
                         f"{', '.join([*DEFAULT_PINS, 'enabled', *settings])}")
    pins = {**DEFAULT_PINS, **options}
    for name in BUTTONS:
        if pins[name] is False:  # TOML has no null: `calza = false` means no CALZA button
            pins[name] = None
    check_pins(**pins)
    if not enabled:
        log.info("panel disabled in the config: running without buttons and LEDs")
        return NoPanel("panel disabled in the config")
    if pin_factory is None:
        pin_factory, reason = _system_pin_factory()
        if pin_factory is None:
            log.warning(reason)
            return NoPanel(reason)
    try:
        return Panel(**pins, **settings, pin_factory=pin_factory)
    except GPIOZeroError as exc:
        reason = f"GPIO pins could not be used ({exc}): running without buttons and LEDs"
        log.warning(reason)
        return NoPanel(reason)
