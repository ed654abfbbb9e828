"""Example game records bundled with the package (`companion judge --example NAME`)."""
