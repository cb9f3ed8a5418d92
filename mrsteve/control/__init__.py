"""Control: visitation map and goal selectors, navigators, instruction policies."""

from mrsteve.control.explorers import (
    CountBasedProposer,
    DirectionProposer,
    Explorer,
    GoalProposer,
    HierarchicalExplorer,
    WanderExplorer,
)
from mrsteve.control.goals import (
    CountBasedGoalSelector,
    EventSource,
    ExplorationConfig,
    GoalSelector,
    TaskConditionedGoalSelector,
)
from mrsteve.control.mapping import HeightMap, HeightMapConfig, PathCosts
from mrsteve.control.navigation import (
    DepthNavigator,
    Navigator,
    NavigatorConfig,
    StraightNavigator,
)
from mrsteve.control.skills import (
    InstructionPolicy,
    ScriptedSkills,
    Skill,
    SkillBook,
    SkillConfig,
    load_skills,
)
from mrsteve.control.visitation import VisitationConfig, VisitationMap

__all__ = [
    "CountBasedGoalSelector",
    "CountBasedProposer",
    "DepthNavigator",
    "DirectionProposer",
    "EventSource",
    "ExplorationConfig",
    "Explorer",
    "GoalProposer",
    "GoalSelector",
    "HeightMap",
    "HeightMapConfig",
    "HierarchicalExplorer",
    "InstructionPolicy",
    "Navigator",
    "NavigatorConfig",
    "PathCosts",
    "ScriptedSkills",
    "Skill",
    "SkillBook",
    "SkillConfig",
    "StraightNavigator",
    "TaskConditionedGoalSelector",
    "VisitationConfig",
    "VisitationMap",
    "WanderExplorer",
    "load_skills",
]
