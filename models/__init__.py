"""Shipped face models and calibrations (data files with their model cards)."""
