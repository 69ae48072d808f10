"""How well a metric agrees with people: correlations with bootstrap CIs, the baselines every table shows
beside a learned metric, and the RadCliQ-style composite."""
