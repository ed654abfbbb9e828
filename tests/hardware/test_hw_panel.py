"""The panel on gpiozero's own mock pins: press buttons, read what the LEDs show."""
import logging
import time

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin

from hardware.panel import NO_GPIO, DEFAULT_PINS, NoPanel, Panel, PanelError, open_panel

BLINK_S = 0.05  # fast blinking so tests see several cycles quickly
RED, GREEN, BLUE = DEFAULT_PINS["status_rgb"]
SEAT_PINS = DEFAULT_PINS["seats"]


@pytest.fixture
def pwm_pins():
    return MockFactory(pin_class=MockPWMPin)


@pytest.fixture
def panel(pwm_pins):
    with Panel(pin_factory=pwm_pins, blink_s=BLINK_S) as panel:
        yield panel


def press(factory, pin):
    factory.pin(pin).drive_low()   # buttons pull up: pressing connects the pin to ground
    factory.pin(pin).drive_high()


def rgb(factory):
    return tuple(round(float(factory.pin(p).state), 2) for p in (RED, GREEN, BLUE))


def values_seen(factory, pin, seconds):
    """Every level the pin took while we watched."""
    factory.pin(pin).clear_states()
    time.sleep(seconds)
    return {round(float(s.state), 2) for s in factory.pin(pin).states}


def test_each_button_calls_its_own_handler(panel, pwm_pins):
    pressed = []
    panel.bind(on_dudo=lambda: pressed.append("dudo"), on_calza=lambda: pressed.append("calza"),
               on_confirm=lambda: pressed.append("confirm"))
    press(pwm_pins, DEFAULT_PINS["calza"])
    press(pwm_pins, DEFAULT_PINS["dudo"])
    press(pwm_pins, DEFAULT_PINS["confirm"])
    assert pressed == ["calza", "dudo", "confirm"]


def test_releasing_a_button_does_not_call_again(panel, pwm_pins):
    pressed = []
    panel.bind(on_dudo=lambda: pressed.append("dudo"))
    pwm_pins.pin(DEFAULT_PINS["dudo"]).drive_low()
    pwm_pins.pin(DEFAULT_PINS["dudo"]).drive_high()
    assert pressed == ["dudo"]


def test_a_failing_handler_is_logged_and_buttons_keep_working(panel, pwm_pins, caplog):
    pressed = []

    def broken():
        raise RuntimeError("no bid to call")

    panel.bind(on_dudo=broken, on_confirm=lambda: pressed.append("confirm"))
    press(pwm_pins, DEFAULT_PINS["dudo"])
    press(pwm_pins, DEFAULT_PINS["confirm"])
    assert pressed == ["confirm"]
    assert "dudo button" in caplog.text and "no bid to call" in caplog.text


def test_unbound_button_does_nothing(panel, pwm_pins):
    panel.bind(on_dudo=None)
    press(pwm_pins, DEFAULT_PINS["dudo"])  # no exception, no handler


def test_steady_status_colours(panel, pwm_pins):
    panel.show_status("ready")
    assert rgb(pwm_pins) == (0, 1, 0)
    panel.show_status("capturing")
    assert rgb(pwm_pins) == (1, 1, 1)
    panel.show_status("reading")
    assert rgb(pwm_pins) == (0, 0, 1)
    panel.show_status("verdict")
    assert rgb(pwm_pins) == (0.6, 0, 1)
    panel.show_status("off")
    assert rgb(pwm_pins) == (0, 0, 0)
    assert panel.status == "off"


def test_check_blinks_amber_and_error_blinks_red(panel, pwm_pins):
    panel.show_status("check")
    assert values_seen(pwm_pins, RED, 4 * BLINK_S) == {0, 1}
    assert values_seen(pwm_pins, GREEN, 4 * BLINK_S) == {0, 0.5}
    panel.show_status("error")
    assert values_seen(pwm_pins, RED, 3 * BLINK_S) == {0, 1}
    assert values_seen(pwm_pins, GREEN, 3 * BLINK_S) == {0}
    panel.show_status("ready")  # a steady colour stops the blinking
    assert values_seen(pwm_pins, GREEN, 3 * BLINK_S) == {1}


def test_seat_leds_show_lost_gained_and_palifico(panel, pwm_pins):
    panel.show_seats({0: "lost", 1: "gained", 2: "palifico"})
    assert values_seen(pwm_pins, SEAT_PINS[0], 4 * BLINK_S) == {1}
    assert values_seen(pwm_pins, SEAT_PINS[1], 4 * BLINK_S) == {0, 1}        # blinks
    pulse = values_seen(pwm_pins, SEAT_PINS[2], 6 * BLINK_S)
    assert any(0 < v < 1 for v in pulse) and len(pulse) > 3                    # fades up and down
    assert all(pwm_pins.pin(p).state == 0 for p in SEAT_PINS[3:])
    assert panel.seats == {0: "lost", 1: "gained", 2: "palifico"}


def test_show_seats_sets_the_whole_picture(panel, pwm_pins):
    panel.show_seats({0: "lost", 3: "lost"})
    panel.show_seats({3: "gained"})
    assert pwm_pins.pin(SEAT_PINS[0]).state == 0
    assert panel.seats == {3: "gained"}


def test_seats_beyond_the_wired_leds_are_ignored(panel, pwm_pins):
    panel.show_seats({7: "lost", 5: "lost"})
    assert pwm_pins.pin(SEAT_PINS[5]).state == 1
    assert panel.seats == {5: "lost"}


def test_bad_states_are_refused(panel):
    with pytest.raises(ValueError, match="unknown status 'sleeping'"):
        panel.show_status("sleeping")
    with pytest.raises(ValueError, match="unknown state 'won'"):
        panel.show_seats({0: "won"})
    with pytest.raises(ValueError, match="seat index"):
        panel.show_seats({-1: "lost"})


def test_without_pwm_colours_are_mixed_on_off_and_palifico_blinks():
    pins = MockFactory()  # plain MockPin: no PWM, like gpiozero's native pin factory
    with Panel(pin_factory=pins, blink_s=BLINK_S) as panel:
        assert not panel.pwm
        panel.show_status("verdict")
        assert rgb(pins) == (1, 0, 1)
        panel.show_seats({0: "palifico"})
        assert values_seen(pins, SEAT_PINS[0], 8 * BLINK_S) == {0, 1}


def test_common_anode_status_led_is_driven_inverted(pwm_pins):
    with Panel(pin_factory=pwm_pins, common_anode=True) as panel:
        panel.show_status("ready")
        assert rgb(pwm_pins) == (1, 0, 1)  # green sinks current: its pin goes low


def test_close_turns_everything_off_and_frees_the_pins(pwm_pins):
    panel = Panel(pin_factory=pwm_pins)
    panel.show_status("ready")
    panel.show_seats({0: "lost"})
    panel.close()
    assert rgb(pwm_pins) == (0, 0, 0) and pwm_pins.pin(SEAT_PINS[0]).state == 0
    Panel(pin_factory=pwm_pins).close()  # the same pins can be claimed again


def test_parts_left_out_of_the_config():
    pins = MockFactory(pin_class=MockPWMPin)
    with open_panel({"calza": False, "seats": [], "status_rgb": []}, pin_factory=pins) as panel:
        pressed = []
        panel.bind(on_dudo=lambda: pressed.append("dudo"), on_calza=lambda: pressed.append("calza"))
        panel.show_status("ready")
        panel.show_seats({0: "lost"})
        press(pins, DEFAULT_PINS["dudo"])
        press(pins, DEFAULT_PINS["calza"])  # not fitted: nothing listens on that pin
        assert pressed == ["dudo"] and panel.status == "ready" and panel.seats == {}


@pytest.mark.parametrize("config, message", [
    ({"dudo": 17, "calza": 17}, "GPIO17 is used twice: dudo button and calza button"),
    ({"seats": [5, 6, 22]}, "GPIO22 is used twice: confirm button and seat 3 LED"),
    ({"confirm": 40}, "confirm button: 40 is not a GPIO number"),
    ({"dudo": "17"}, "dudo button: '17' is not a GPIO number"),
    ({"status_rgb": [16, 20]}, "status_rgb needs three pins"),
    ({"dudu": 17}, "unknown panel option dudu"),
])
def test_config_mistakes_are_named(config, message, pwm_pins):
    with pytest.raises(PanelError, match=message):
        open_panel(config, pin_factory=pwm_pins)


def test_open_panel_uses_config_pins(pwm_pins):
    panel = open_panel({"dudo": 23, "seats": [24, 25], "blink_s": 0.1}, pin_factory=pwm_pins)
    try:
        pressed = []
        panel.bind(on_dudo=lambda: pressed.append("dudo"))
        press(pwm_pins, 23)
        panel.show_seats({1: "lost"})
        assert pressed == ["dudo"] and pwm_pins.pin(25).state == 1
    finally:
        panel.close()


def test_disabled_panel_is_a_nopanel(pwm_pins):
    assert isinstance(open_panel({"enabled": False}, pin_factory=pwm_pins), NoPanel)


@pytest.fixture
def no_default_factory(monkeypatch):
    """Run open_panel as a fresh process would: no pin factory chosen yet."""
    saved = Device.pin_factory
    monkeypatch.setattr(Device, "pin_factory", None)
    yield
    if Device.pin_factory is not None and Device.pin_factory is not saved:
        Device.pin_factory.close()
    Device.pin_factory = saved


def test_laptop_without_gpio_gets_nopanel_and_one_message(no_default_factory, caplog, recwarn):
    try:
        from gpiozero.pins.lgpio import LGPIOFactory  # noqa: F401  (present on a Pi)
        pytest.skip("this machine has GPIO")
    except ImportError:
        pass
    with caplog.at_level(logging.INFO, logger="hardware.panel"):
        panel = open_panel({})
    assert isinstance(panel, NoPanel) and panel.reason == NO_GPIO
    assert [r.getMessage() for r in caplog.records] == [NO_GPIO]
    assert not [w for w in recwarn if "gpiozero" in str(w.filename)]  # gpiozero's fallbacks stay quiet
    panel.show_status("ready")
    panel.show_seats({0: "lost"})
    panel.bind(on_dudo=lambda: None)
    assert panel.status == "ready" and panel.seats == {0: "lost"}


def test_mock_pins_from_the_environment_are_refused(no_default_factory, monkeypatch, caplog):
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    panel = open_panel({})
    assert isinstance(panel, NoPanel) and "mock pins" in panel.reason
    assert "running without buttons and LEDs" in caplog.text
    assert Device.pin_factory is None  # nothing else gets silently built on mock pins


def test_a_pi_whose_pin_libraries_fail_is_told_why(no_default_factory, monkeypatch, tmp_path):
    try:
        from gpiozero.pins.lgpio import LGPIOFactory  # noqa: F401
        pytest.skip("this machine has GPIO")
    except ImportError:
        pass
    model = tmp_path / "model"
    model.write_bytes(b"Raspberry Pi 5 Model B Rev 1.0\x00")
    monkeypatch.setattr("hardware.panel.PI_MODEL_FILE", str(model))
    panel = open_panel({})
    assert isinstance(panel, NoPanel)
    assert panel.reason.startswith("no usable GPIO on this Raspberry Pi (Falling back from lgpio:")
    assert "install python3-lgpio" in panel.reason


def test_unknown_pin_library_in_the_environment_is_no_gpio(no_default_factory, monkeypatch):
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "nosuchlibrary")
    panel = open_panel({})
    assert isinstance(panel, NoPanel) and panel.reason == NO_GPIO


def test_config_mistakes_are_caught_even_without_gpio(no_default_factory):
    with pytest.raises(PanelError, match="used twice"):
        open_panel({"dudo": 5})


def test_showing_the_same_state_again_keeps_the_blink_going(pwm_pins):
    with Panel(pin_factory=pwm_pins, blink_s=0.4) as panel:  # slow: robust on a busy machine
        panel.show_seats({0: "gained"})
        panel.show_status("check")
        time.sleep(0.6)  # both blinks are in their dark half (0.4 s to 0.8 s)
        assert pwm_pins.pin(SEAT_PINS[0]).state == 0 and pwm_pins.pin(RED).state == 0
        panel.show_seats({0: "gained"})  # every table event repeats the picture
        panel.show_status("check")
        # a restarted blink would have lit up at once
        assert pwm_pins.pin(SEAT_PINS[0]).state == 0 and pwm_pins.pin(RED).state == 0
