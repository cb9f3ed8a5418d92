"""Choosing the agent's encoder: ``make_agent(..., encoder=...)`` and every experiment's
``--encoder``."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mrsteve.agent.config import EncoderConfig
from mrsteve.agent.factory import DEFAULT_PARTS, PARTS, agent_config, build_agent, make_agent
from mrsteve.eval.ablation import AblationConfig
from mrsteve.eval.long_tasks import LongTaskConfig
from mrsteve.eval.memory_tasks import MemoryTasksConfig
from mrsteve.eval.registry import EXPERIMENTS
from mrsteve.eval.sequential import ABA_SPARSE, SequentialConfig
from mrsteve.eval.tc_exploration import TcExplorationConfig
from mrsteve.perception import SemanticEncoder
from mrsteve.perception.pixels import PixelEncoder, load_shipped_weights

AGENT_CONFIGS = (SequentialConfig, AblationConfig, MemoryTasksConfig, LongTaskConfig,
                 TcExplorationConfig)


def test_the_pixels_agent_perceives_with_the_pixel_encoder_and_records_its_weights():
    agent = make_agent("mrsteve", parts="stand-in", encoder="pixels")
    assert isinstance(agent.encoder, PixelEncoder)
    assert agent.config_tree.encoder == EncoderConfig("pixels", load_shipped_weights().sha256)
    assert agent.memory.dim == agent.encoder.dim


def test_the_default_agent_is_the_papers_and_the_stand_ins_are_one_argument_away():
    """``make_agent`` and ``agent_config`` build the parts ``mrsteve eval`` runs by default (the
    learned ones); ``parts="stand-in"`` gives the ground-truth stand-ins, a part named on its own
    overrides either."""
    tree = make_agent("mrsteve").config_tree
    assert tree.encoder == EncoderConfig("pixels", load_shipped_weights().sha256)
    assert (tree.navigator_kind, tree.instruction_policy) == ("learned", "learned")
    assert agent_config("mrsteve") == agent_config("mrsteve", **PARTS[DEFAULT_PARTS])
    agent = make_agent("mrsteve", parts="stand-in")
    assert isinstance(agent.encoder, SemanticEncoder)
    assert agent.config_tree.encoder == EncoderConfig("semantic", None)
    assert (agent.config_tree.navigator_kind, agent.config_tree.instruction_policy) == (
        "depth", "scripted")
    mixed = agent_config("mrsteve", parts="stand-in", navigator="learned")
    assert (mixed.encoder.kind, mixed.navigator_kind) == ("semantic", "learned")
    with pytest.raises(ValueError, match="unknown parts 'fast'; known: learned, stand-in"):
        make_agent("mrsteve", parts="fast")


def test_an_unknown_encoder_is_an_error_naming_the_known_ones():
    with pytest.raises(ValueError, match="unknown encoder 'clip'; known: semantic, pixels"):
        make_agent("mrsteve", parts="stand-in", encoder="clip")


def test_a_tree_naming_other_weights_is_refused():
    tree = agent_config("mrsteve", parts="stand-in", encoder="pixels")
    stale = replace(tree, encoder=EncoderConfig("pixels", "0" * 64))
    with pytest.raises(ValueError, match="names pixels encoder weights 0000"):
        build_agent(stale)


@pytest.mark.parametrize("config_type", AGENT_CONFIGS, ids=lambda t: t.__name__)
def test_every_agent_experiment_checks_its_encoder(config_type):
    assert config_type().encoder == "pixels"  # the paper's agent sees pixels
    assert config_type(parts="stand-in").encoder == "semantic"
    with pytest.raises(ValueError, match="unknown encoder 'rgb'"):
        config_type(encoder="rgb")


def test_every_experiment_that_runs_an_agent_has_the_encoder_option():
    with_agents = {name for name, e in EXPERIMENTS.items() if "agent" in e.options
                   and name not in ("exploration",)}
    assert with_agents
    for name in with_agents:
        assert "encoder" in EXPERIMENTS[name].options, name


def test_the_encoder_reaches_the_episodes_and_the_summary():
    groups = ABA_SPARSE.groups(SequentialConfig(task="water-log-water", encoder="pixels"))
    assert all(g.spec.agent.encoder.kind == "pixels" for g in groups)
    assert all(g.spec.tree()["agent"]["encoder"]["kind"] == "pixels" for g in groups)
