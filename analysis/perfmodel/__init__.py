"""One calibrated performance model: measured collectives, precision recipes, the step-time equation, its
calibration per hardware family and framework, predictions for unmeasured configurations and their validation."""
