"""The paper's tasks and their metrics."""

from mrsteve.tasks.exploration import ExplorationTaskConfig, run_exploration
from mrsteve.tasks.navigation import NavigationTaskConfig, run_navigation

__all__ = ["ExplorationTaskConfig", "NavigationTaskConfig", "run_exploration", "run_navigation"]
