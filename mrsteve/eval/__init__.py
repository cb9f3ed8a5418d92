"""The paper's experiments: one object each (config, episodes, metrics, table, plots), sweeps over
seeded episodes with resumable records, summaries and plots."""
