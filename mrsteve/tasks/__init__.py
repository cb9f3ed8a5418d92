"""The paper's tasks and their metrics."""
