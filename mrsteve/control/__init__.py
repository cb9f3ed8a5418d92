"""Control: visitation map and goal selectors, navigators, instruction policies."""

from mrsteve.control.goals import (
    CountBasedGoalSelector,
    EventSource,
    ExplorationConfig,
    GoalSelector,
    TaskConditionedGoalSelector,
)
from mrsteve.control.visitation import VisitationConfig, VisitationMap

__all__ = [
    "CountBasedGoalSelector",
    "EventSource",
    "ExplorationConfig",
    "GoalSelector",
    "TaskConditionedGoalSelector",
    "VisitationConfig",
    "VisitationMap",
]
