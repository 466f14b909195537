"""Calibration inputs: measured collective benchmark output read into typed rows."""
