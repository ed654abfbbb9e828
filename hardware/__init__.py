"""Camera backends and the gpiozero panel (buttons and LEDs); nothing here knows the rules."""
