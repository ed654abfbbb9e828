"""Perudo table companion: rules engine, table state, web app and CLI."""
