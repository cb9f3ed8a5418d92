"""The MrSteve agent: Place Event Memory, the mode selector, exploration, navigation, execution.

Algorithm 2 of the paper (appendix "MrSteve Algorithm") with the modes of the authors' release:

- every step the current clip embedding is written to memory with the pose relative to the
  episode start, whatever the mode (Algorithm 2, line 8); :meth:`MrSteve.observe` is that write
  alone, for steps the agent watches without acting (the Memory Tasks' scripted exploration
  phase), and :meth:`MrSteve.act` calls it;
- a task is told by its prompts (:meth:`MrSteve.set_task`) or, in the Memory Tasks, by an image
  goal (:meth:`MrSteve.set_goal`: a clip embedding read as the query instead of a text prompt);
- the memory is read with the task's *explore* prompt only when no mode is selected: when a task
  starts and after ``L = 600`` steps in the selected mode, whichever it is (lines 9-17: the agent
  state is reset and the mode selector runs again), so an agent that found nothing explores for L
  steps before it reads again; the authors' release reads every step while exploring instead,
  which :attr:`ModeSelectorConfig.memory_reads` ``every-explore-step`` chooses;
- the re-read after L steps looks for *new* candidates, as the appendix gives it its purpose (a
  wrong experience frame keeps the agent "in trouble for a long time", so it "queries the memory
  to search for new candidates"): a target the agent reached within the L steps, the task not
  ended when they ran out, is *searched*, and the frames seen within
  :attr:`ModeSelectorConfig.searched_radius` of it are no longer candidates for this task, so the
  next read moves on instead of returning to the same wrong frame (or to the agent's own views of
  it); ``searched_radius = 0`` is the release's literal pick, the nearest match every time;
- with candidates, the one nearest the agent is the target (for an image goal, by default the
  best-matching one: :attr:`ModeSelectorConfig.image_goal_target`): NAVIGATE to its position (done
  within the navigator's 3 blocks), CAM_ADJUST to its stored yaw and pitch (within 5 degrees),
  then EXECUTE the instruction policy with the task's *execute* prompt;
- without candidates, EXPLORE with the hierarchical explorer (pi_H-Nav + pi_L-Nav; line 30:
  pi_H-Nav reads M_t, the count-based one's visitation map painted from the frames the memory
  holds).

Every part is pluggable (memory, encoder, explorer, navigator, instruction policy), so the paper's
variants MrSteve-FM / -EM / -PM, Center Embed and PMC-MrSteve-FM are this class with other parts
(see :mod:`mrsteve.agent.factory`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mrsteve.control.explorers import Explorer
from mrsteve.control.motion import clamp, heading_to, wrap_degrees
from mrsteve.control.navigation import Navigator
from mrsteve.control.skills import InstructionPolicy
from mrsteve.digests import OMITTED_WHEN_DEFAULT
from mrsteve.memory import Memory
from mrsteve.naming import check_name
from mrsteve.perception import Encoder, TaskPrompts
from mrsteve.protocols import (
    QUERY_CANDIDATES_KEPT,
    Action,
    Decision,
    Mode,
    Observation,
    Query,
    Sighting,
)
from mrsteve.spaces import noop_action
from mrsteve.world.camera import Camera

MEMORY_READS = ("algorithm-2", "every-explore-step")
"""When the mode selector reads the memory (:attr:`ModeSelectorConfig.memory_reads`)."""

SEARCHED_TARGETS = ("reached", "reached-or-blocked")
"""Which targets the re-query leaves (:attr:`ModeSelectorConfig.searched_targets`)."""

IMAGE_GOAL_TARGETS = ("best", "nearest")
"""Which matching frame an image goal targets (:attr:`ModeSelectorConfig.image_goal_target`)."""

TEXT_GOAL_TARGETS = ("nearest", "best")
"""Which matching frame a text task targets (:attr:`ModeSelectorConfig.text_goal_target`)."""


@dataclass(frozen=True)
class ModeSelectorConfig:
    """Parameters of the mode selector (paper, appendix "MrSteve Algorithm")."""

    requery_interval: int = 600
    """L: steps in one mode after which the memory is read again (30 s of game time)."""
    top_k: int | None = None
    """Clusters ranked per read; ``None`` uses the memory's own (paper: 30)."""
    camera_tolerance: float = 5.0
    """CAM_ADJUST is done when yaw and pitch are within this many degrees of the stored ones."""
    camera_speed: float = 15.0
    """Largest camera turn per step in CAM_ADJUST, degrees."""
    image_goal_target: str = "best"
    """Which frame matching an image goal (:meth:`MrSteve.set_goal`) is the target: ``best``,
    the highest-scoring one, or ``nearest``, the one nearest the agent (the release's rule for
    text tasks, where any cow serves "kill cow"). An image goal names one place, and a look-alike
    elsewhere (the Memory Tasks' second house) does not serve it; the paper states no rule for
    image goals."""
    text_goal_target: str = field(default="nearest", metadata=OMITTED_WHEN_DEFAULT)
    """Which frame matching a text task's prompt is the target: ``nearest``, the one nearest the
    agent (the authors' release: any cow serves "kill cow"), or ``best``, the highest-scoring one
    (a diagnostic beyond the paper: a close-up view wins over a distant view or a look-alike
    that also clears the threshold nearer the agent)."""
    memory_reads: str = "algorithm-2"
    """When the memory is read: ``algorithm-2``, only when no mode is selected (at the task's
    start and after L steps in a mode, lines 9-17), or ``every-explore-step``, also on every step
    while exploring, so that exploration stops as soon as a candidate appears (the authors'
    release; beyond the paper)."""
    searched_radius: float = 8.0
    """Blocks around a searched target within which the frames are no longer candidates for the
    rest of the task. A target is *searched* when the task had not ended when the L steps of
    :attr:`requery_interval` toward it ran out and the agent had reached it (CAM_ADJUST and
    EXECUTE there; the selection's one timer counts the travel too) or, if
    :attr:`searched_targets` says so, the navigator had given up on it. The paper re-reads
    after L steps because "the Mode Selector retrieves a wrong experience frame" and "changing
    the navigation target can be helpful" (appendix "MrSteve Algorithm"); without the exclusion
    the nearest match is the same wrong frame again, or one of the agent's own views of it. The
    same rule for every memory. 0: the authors' release's literal pick (the nearest match, no
    exclusion)."""
    searched_targets: str = field(default="reached", metadata=OMITTED_WHEN_DEFAULT)
    """Which targets the re-query leaves as searched (with :attr:`searched_radius` on):
    ``reached``, a target the agent reached, or ``reached-or-blocked``, also one it is still
    navigating to when the L steps run out while the navigator reports it out of reach
    (:meth:`Navigator.blocked`: stalled, standing still, no progress, or judged unreachable;
    beyond the paper). With ``reached`` a frame the navigator cannot reach, or a look-alike
    across water, stays the nearest candidate and is picked again at every re-query, the
    "trouble for a long time" the appendix's re-query exists to end. A far target the navigator
    is still making progress toward is never searched."""

    def __post_init__(self) -> None:
        if not (isinstance(self.requery_interval, int) and self.requery_interval >= 1):
            raise ValueError(f"requery_interval must be an int >= 1, got {self.requery_interval!r}")
        radius = self.searched_radius
        if isinstance(radius, bool) or not isinstance(radius, (int, float)) or not radius >= 0:
            raise ValueError(f"searched_radius must be a number of blocks >= 0 (0: off), "
                             f"got {self.searched_radius!r}")
        check_name(self.memory_reads, MEMORY_READS, "memory_reads")
        check_name(self.searched_targets, SEARCHED_TARGETS, "searched_targets")
        if self.camera_tolerance <= 0 or self.camera_speed <= 0:
            raise ValueError("camera_tolerance and camera_speed must be positive")
        check_name(self.image_goal_target, IMAGE_GOAL_TARGETS, "image_goal_target")
        check_name(self.text_goal_target, TEXT_GOAL_TARGETS, "text_goal_target")


MrSteveConfig = ModeSelectorConfig
"""The mode selector's configuration under its former name."""


class MrSteve:
    """Memory-augmented instruction following (paper, Section 3 and Algorithms 1-2)."""

    def __init__(
        self,
        memory: Memory,
        encoder: Encoder,
        explorer: Explorer,
        navigator: Navigator,
        policy: InstructionPolicy,
        config: ModeSelectorConfig | None = None,
        name: str = "mrsteve",
    ):
        self.memory = memory
        self.encoder = encoder
        self.explorer = explorer
        self.navigator = navigator
        self.policy = policy
        self.config = config or ModeSelectorConfig()
        self.name = name
        self.mode: Mode | None = None
        self.task: TaskPrompts | None = None
        self.target: tuple[float, ...] | None = None
        self.last_query: Query | None = None
        self._start = np.zeros(5)
        self._t_offset = 0
        """Memory time of the episode's step 0 (the steps of kept earlier episodes before it)."""
        self._t_last = -1
        self._mode_steps = 0
        self._query_vector: np.ndarray | None = None
        self._threshold = 0.0
        self._goal_name = ""
        """What the query stands for in :class:`Query` records (the explore prompt, or
        ``image goal``)."""
        self._nearest = True
        """Whether a read's target is the matching frame nearest the agent (else the best)."""
        self._searched = np.empty((0, 2))
        """The task's searched targets (:attr:`ModeSelectorConfig.searched_radius`): memory
        ``x, z``, one row each."""

    # -- the Agent interface -----------------------------------------------------------------------

    def reset(self, obs: Observation, rng: np.random.Generator, camera: Camera, *,
              keep_memory: bool = False) -> None:
        """A new episode. The memory is cleared, unless ``keep_memory``: then it is carried over
        and time goes on from the last episode (the steps the agent is given count from there, so
        the memory's times never go back). ``camera`` (the environment's) goes to the explorer,
        the navigator and the instruction policy."""
        if keep_memory:
            self._t_offset = self._t_last + 1
        else:
            self.memory.clear()
            self._t_offset = 0
        self._start = np.asarray(obs["pose"], dtype=np.float64).copy()
        self.encoder.reset()
        self.explorer.reset(obs, rng, camera)
        self.navigator.reset(rng, camera)
        self.policy.reset(rng, camera)
        self.task = None
        self._query_vector = None
        self._new_query()
        self.last_query = None

    def set_task(self, task: TaskPrompts, t: int) -> None:
        """A new task (Algorithm 2's preamble), told by its prompts: reset the mode state; the next
        step queries."""
        self.task = task
        self._goal_name = task.explore
        self._nearest = self.config.text_goal_target == "nearest"
        self._query_vector = self.encoder.encode_text(self.task.explore)
        self._threshold = self.encoder.task_threshold(self.task.explore)
        # task-conditioned exploration reads the place prompt; other explorers ignore it
        self.explorer.set_task(self.encoder.encode_text(self.task.place),
                               self.encoder.task_threshold(self.task.place))
        self._new_query()

    def set_goal(self, embedding: np.ndarray, threshold: float, t: int) -> None:
        """An image goal (paper Section 4.3, Memory Tasks): ``embedding``, the encoder's embedding
        of a 16-frame clip, is the memory query instead of a text prompt, with ``threshold`` (the
        encoder's calibrated ``image_goal``). The agent recalls the best-matching frame (the
        nearest matching one if :attr:`ModeSelectorConfig.image_goal_target` says ``nearest``) and
        navigates there, exploring while memory has none; once there it stands still (there is
        nothing to execute: the goal is the place)."""
        query = np.asarray(embedding, dtype=np.float32).reshape(-1)
        if query.shape != (self.encoder.dim,) or not np.all(np.isfinite(query)):
            raise ValueError(f"an image goal is a finite embedding of {self.encoder.dim} values, "
                             f"got shape {np.shape(embedding)}")
        norm = float(np.linalg.norm(query))
        if norm == 0.0:
            raise ValueError("an image goal embedding must not be all zeros")
        self.task = None
        self._goal_name = "image goal"
        self._nearest = self.config.image_goal_target == "nearest"
        self._query_vector = query / norm
        self._threshold = float(threshold)
        self.explorer.set_task(self._query_vector, self._threshold)
        self._new_query()

    def observe(self, obs: Observation, t: int) -> None:
        """Step ``t`` seen without acting (Algorithm 2, line 8): its clip embedding is written to
        memory with the pose relative to the start, and the explorer's maps see it. :meth:`act`
        does this first, so a watched step and an acted one are remembered alike."""
        pose = np.asarray(obs["pose"], dtype=np.float64)
        self._t_last = t + self._t_offset
        self.memory.write(self.encoder.observe(obs), self.memory_pose(pose), self._t_last)
        self.explorer.observe(obs)

    def act(self, obs: Observation, t: int) -> Decision:
        """One step of Algorithm 2: write the step to memory (:meth:`observe`, line 8), reset the
        mode after L steps in it (lines 9-13), run the mode selector when no mode is selected
        (lines 15-25) and act in the selected mode; the decision says the mode, the target and
        the read made, if any."""
        self.observe(obs, t)
        if self._query_vector is None:
            return Decision(self.explorer.act(obs), goal=self.explorer.goal)
        pose = np.asarray(obs["pose"], dtype=np.float64)

        query = None
        if self._mode_steps >= self.config.requery_interval:
            if self._target_searched(obs):
                self._searched_target()
            self.mode = None
        if self.mode is None or (self.mode is Mode.EXPLORE
                                 and self.config.memory_reads == "every-explore-step"):
            query = self._select_mode(pose, t)
        self._mode_steps += 1
        action = self._act_in_mode(obs, pose)
        goal = self.explorer.goal if self.mode is Mode.EXPLORE else None
        return Decision(action, mode=self.mode, target=self.target, goal=goal, query=query)

    def recall(self, embedding: np.ndarray, threshold: float) -> np.ndarray:
        """``float[n, 2]``: the episode-frame ``(x, z)`` of every remembered frame whose
        similarity to ``embedding`` is at least ``threshold`` (what-where: an evaluator's
        question whether a goal is still in memory)."""
        if len(self.memory) == 0:
            return np.empty((0, 2))
        found = self.memory.read(np.asarray(embedding, dtype=np.float32), threshold)
        return found.pose[:, [0, 2]] + self._start[[0, 2]]

    def sighting(self, prompt: str, obs: Observation, t: int) -> Sighting | None:
        """Where and when the memory saw what ``prompt`` describes (what-where-when, for a
        planner above the agent): the matching frame nearest the agent, as the mode selector
        would target it, with its distance, bearing from the agent's heading and age; ``None``
        when no remembered frame matches (never seen, or forgotten)."""
        if len(self.memory) == 0:
            return None
        pose = self.memory_pose(np.asarray(obs["pose"], dtype=np.float64))
        found = self.memory.read(self.encoder.encode_text(prompt),
                                 self.encoder.task_threshold(prompt), top_k=self.config.top_k,
                                 near=(pose[0], pose[2]), limit=1)
        if not len(found):
            return None
        x, z = float(found.pose[0, 0]), float(found.pose[0, 2])
        bearing = wrap_degrees(heading_to(pose[0], pose[2], x, z) - pose[3])
        return Sighting(prompt, float(np.hypot(x - pose[0], z - pose[2])), float(bearing),
                        max(0, t + self._t_offset - int(found.t[0])))

    # -- helpers -----------------------------------------------------------------------------------

    def _act_in_mode(self, obs: Observation, pose: np.ndarray) -> Action:
        """The action of the selected mode; NAVIGATE hands over to CAM_ADJUST once there, and
        CAM_ADJUST to EXECUTE once facing the target's view."""
        if self.mode is Mode.NAVIGATE:
            goal = (self.target[0], self.target[2])
            if not self.navigator.reached(obs, goal):
                return self.navigator.act(obs, goal)
            self.mode = Mode.CAM_ADJUST  # the selected mode's sub-steps share its timer
        if self.mode is Mode.CAM_ADJUST:
            action = self._turn_to_target(pose)
            if action is not None:
                return action
            self.mode = Mode.EXECUTE
        if self.mode is Mode.EXECUTE:
            if self.task is None:  # an image goal: the place is reached, nothing to execute
                return noop_action()
            return self.policy.act(obs, self.task.execute)
        return self.explorer.act(obs)

    def memory_pose(self, pose: np.ndarray) -> np.ndarray:
        """An episode-frame pose as the memory keeps it: the position relative to the start pose
        itself (the paper's convention; the episode frame is relative to the start's block, so
        the two differ by the start's fraction of a block); yaw and pitch unchanged (the paper's
        start heading is 0 on every map)."""
        rel = np.asarray(pose, dtype=np.float64).copy()
        rel[:3] -= self._start[:3]
        return rel

    def episode_pose(self, pose: np.ndarray) -> np.ndarray:
        """Inverse of :meth:`memory_pose`: a remembered pose in the episode frame."""
        out = np.asarray(pose, dtype=np.float64).copy()
        out[:3] += self._start[:3]
        return out

    def _enter(self, mode: Mode | None) -> None:
        self.mode = mode
        self._mode_steps = 0

    def _new_query(self) -> None:
        """A new task or goal: no mode, no target, nothing searched yet; the next step reads."""
        self._enter(None)
        self.target = None
        self._searched = np.empty((0, 2))

    def _target_searched(self, obs: Observation) -> bool:
        """Whether the L steps toward the current target searched it
        (:attr:`ModeSelectorConfig.searched_targets`): the agent reached it (CAM_ADJUST or
        EXECUTE), or is still navigating to it and the navigator reports it out of reach."""
        if self.mode in (Mode.CAM_ADJUST, Mode.EXECUTE):
            return True
        return (self.mode is Mode.NAVIGATE
                and self.config.searched_targets == "reached-or-blocked"
                and self.navigator.blocked(obs, (self.target[0], self.target[2])))

    def _searched_target(self) -> None:
        """The L steps toward the target searched it and the task did not end: remember it as
        searched (unless :attr:`ModeSelectorConfig.searched_radius` is 0, the release's pick)."""
        if self.config.searched_radius > 0:
            rel = self.memory_pose(np.asarray(self.target, dtype=np.float64))
            self._searched = np.vstack([self._searched, (rel[0], rel[2])])

    def _searched_discs(self) -> list[tuple[float, float, float]] | None:
        """The discs of :attr:`ModeSelectorConfig.searched_radius` around the searched targets,
        whose frames the mode selector's read leaves out (``None``: none searched)."""
        if not len(self._searched):
            return None
        radius = float(self.config.searched_radius)
        return [(float(x), float(z), radius) for x, z in self._searched]

    def _select_mode(self, pose: np.ndarray, t: int) -> Query:
        """The mode selector (Algorithm 2, lines 15-25): read the memory with the explore prompt;
        with candidates, target the one nearest the agent (an image goal's best match; each
        configurable); else explore. Each selection restarts the one timer of the
        selected mode (Algorithm 2 keeps one per selection: NAVIGATE, then CAM_ADJUST and EXECUTE
        toward the same target, share it). The read returns the first
        :data:`QUERY_CANDIDATES_KEPT` matches, what the selection and its record use, with the
        count and best score of all. Returns the read (:attr:`last_query`)."""
        rel = self.memory_pose(pose)
        near = (rel[0], rel[2]) if self._nearest else None
        found = self.memory.read(self._query_vector, self._threshold, top_k=self.config.top_k,
                                 near=near, outside=self._searched_discs(), scores="best",
                                 limit=QUERY_CANDIDATES_KEPT)
        if len(found):
            target = tuple(float(v) for v in self.episode_pose(found.pose[0]))
            ground = (found.pose[:QUERY_CANDIDATES_KEPT, [0, 2]].astype(np.float64)
                      + self._start[[0, 2]])  # episode frame, as episode_pose gives it
            self.last_query = Query(
                t, self._goal_name, found.matched, found.best_score, target, int(found.t[0]),
                tuple((float(x), float(z)) for x, z in ground),
            )
            self.mode = Mode.NAVIGATE
            self.target = target
        else:
            self.last_query = Query(t, self._goal_name, 0, None, None, None)
            self.mode = Mode.EXPLORE
            self.target = None
        self._mode_steps = 0
        return self.last_query

    def _turn_to_target(self, pose: np.ndarray) -> Action | None:
        """CAM_ADJUST: a camera action toward the target's stored yaw and pitch, or ``None`` once
        both are within the tolerance."""
        cfg = self.config
        d_yaw = wrap_degrees(self.target[3] - pose[3])
        d_pitch = self.target[4] - pose[4]
        if abs(d_yaw) <= cfg.camera_tolerance and abs(d_pitch) <= cfg.camera_tolerance:
            return None
        turn = (clamp(d_pitch, cfg.camera_speed), clamp(d_yaw, cfg.camera_speed))
        return {"camera": np.array(turn, dtype=np.float32)}
