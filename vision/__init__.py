"""Image in, dice out: find every die on the tray and read its face."""
