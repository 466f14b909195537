"""Questions asked of the model: variants, sweeps, baselines, faults, layouts, calibration."""
