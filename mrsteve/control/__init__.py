"""Control: motion rules, visitation map and goal selectors, height map and planning, navigators,
the wanderer, and the instruction skills."""

from mrsteve.control.explorers import Explorer, HierarchicalExplorer
from mrsteve.control.goals import (
    CountBasedGoalSelector,
    DirectionConfig,
    DirectionGoalSelector,
    EventSource,
    ExplorationConfig,
    GoalSelector,
    TaskConditionedGoalSelector,
)
from mrsteve.control.heightmap import HeightMap, HeightMapConfig
from mrsteve.control.motion import ProgressTracker, StallTracker, heading_to, wrap_degrees
from mrsteve.control.navigation import (
    DepthNavigator,
    Navigator,
    NavigatorConfig,
    StraightNavigator,
)
from mrsteve.control.path_planning import PathCosts
from mrsteve.control.skill_book import Skill, SkillBook, load_skills
from mrsteve.control.skills import InstructionPolicy, ScriptedSkills, SkillConfig
from mrsteve.control.visitation import VisitationConfig, VisitationMap
from mrsteve.control.wander import WanderConfig, WanderExplorer

__all__ = [
    "CountBasedGoalSelector",
    "DepthNavigator",
    "DirectionConfig",
    "DirectionGoalSelector",
    "EventSource",
    "ExplorationConfig",
    "Explorer",
    "GoalSelector",
    "HeightMap",
    "HeightMapConfig",
    "HierarchicalExplorer",
    "InstructionPolicy",
    "Navigator",
    "NavigatorConfig",
    "PathCosts",
    "ProgressTracker",
    "ScriptedSkills",
    "Skill",
    "SkillBook",
    "SkillConfig",
    "StallTracker",
    "StraightNavigator",
    "TaskConditionedGoalSelector",
    "VisitationConfig",
    "VisitationMap",
    "WanderConfig",
    "WanderExplorer",
    "heading_to",
    "load_skills",
    "wrap_degrees",
]
