"""Which parts an agent is made of: ``--parts`` and each part's own option, declared once.

:class:`AgentParts` is the options object every command that builds agents embeds (each
experiment's config derives from it, and the demo and ``mrsteve bench agent`` take its fields as
options): the parts' names, resolved once from ``--parts`` (:data:`PARTS`), the learned
navigator's weights file, and the released weights files of the parts of :mod:`mrsteve.minecraft`,
one option per kind of file (:data:`RELEASED_WEIGHTS`, read from the fields' metadata). The
checks of what a tree records of its weights files live here too: :func:`navigator_weights_file`
and :func:`released_files`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

from mrsteve.agent.registry import INSTRUCTION_POLICIES
from mrsteve.control.registry import AGENT_NAVIGATORS, LEARNED_NAVIGATORS, navigator_spec
from mrsteve.digests import WeightsFile
from mrsteve.naming import check_name, entry_point, lookup
from mrsteve.perception import ENCODERS


def navigator_weights_file(path: str | None, navigator: str) -> tuple[str | None, str | None]:
    """The absolute path and the hash of the weights file ``path`` a tree's learned navigator
    runs with (``(None, None)``: the shipped one), so that any worker finds it and a file changed
    later is told apart; a bad file, or weights for an agent whose ``navigator`` is not a
    learned one, raise ``ValueError``."""
    if path is None:
        return None, None
    spec = navigator_spec(navigator)
    if not spec.learned:
        learned = " or ".join(repr(name) for name in LEARNED_NAVIGATORS
                              if name in AGENT_NAVIGATORS)
        raise ValueError(f"navigator weights {path!r} are for the learned navigator; give "
                         f"navigator {learned}, not {navigator!r}")
    return str(Path(path).resolve()), spec.read_weights(path).sha256


def instruction_weights_file(path: str | None, policy: str) -> tuple[str | None, str | None]:
    """The absolute path and the hash of the weights file ``path`` a tree's learned instruction
    policy runs with (``(None, None)``: the shipped one); a bad file, or weights for a policy
    other than the learned one, raise ``ValueError``."""
    if path is None:
        return None, None
    if policy != "learned":
        raise ValueError(f"instruction-policy weights {path!r} are for the learned instruction "
                         f"policy; give instruction policy 'learned', not {policy!r}")
    from mrsteve.control.instruction import InstructionWeights

    return str(Path(path).resolve()), InstructionWeights.read(path).sha256


WeightsPaths = Mapping[str, "str | None"]
"""The released weights files given for the parts that take them: path by kind (``mineclip``,
``vpt-nav``, ``steve1``, ``steve1-prior``; ``None``: not given)."""


def released_files(parts: Iterable[tuple[str, Any]], paths: WeightsPaths | None
                   ) -> tuple[WeightsFile, ...]:
    """The tree's records of the released weights files the ``parts`` (``(what, registry
    entry)`` pairs) are built from, each checked key by key, sorted by kind. A part whose
    dependencies are not installed, a file not given, or a file that is not the checkpoint its
    kind names is a one-line ``ValueError``; files no part takes are not read."""
    paths = paths or {}
    files: dict[str, WeightsFile] = {}
    for what, spec in parts:
        if not spec.files:
            continue
        entry_point(spec.build, what, spec.extra)  # its dependencies, else how to install them
        if spec.check_file is None:
            raise ValueError(f"{what} runs on released weights files but its entry names no "
                             "check_file to read them")
        check = entry_point(spec.check_file, what, spec.extra)
        for kind in spec.files:
            if kind in files:
                continue
            if paths.get(kind) is None:
                raise ValueError(f"{what} runs on a released {kind} weights file; none is given")
            files[kind] = check(kind, paths[kind])
    return tuple(files[kind] for kind in sorted(files))


def _files_of(spec: Any, what: str, files: tuple[WeightsFile, ...]) -> tuple[WeightsFile, ...]:
    """The weights files of a tree that a part's entry (``spec``) is built from, in its order."""
    recorded = {file.kind: file for file in files}
    missing = [kind for kind in spec.files if kind not in recorded]
    if missing:
        raise ValueError(f"the configuration names no {', '.join(missing)} weights file for "
                         f"{what}; rebuild it")
    return tuple(recorded[kind] for kind in spec.files)


PARTS: Mapping[str, Mapping[str, str]] = MappingProxyType({
    "learned": MappingProxyType({"encoder": "pixels", "navigator": "learned",
                                 "instruction_policy": "learned"}),
    "stand-in": MappingProxyType({"encoder": "semantic", "navigator": "depth",
                                  "instruction_policy": "scripted"}),
})
"""The agent's part of each kind by ``parts`` value (``--parts`` on the command line):
``learned`` (the default, the paper's agent: MineCLIP's, VPT-Nav's and STEVE-1's roles played by
models that see the RGB frame and the pose alone) or ``stand-in`` (the embedded world's stand-ins,
which also read the renderer's depth and semantic frames). A part named on its own (``encoder=``,
``--encoder``, ...) overrides its entry."""

DEFAULT_PARTS = "learned"
"""The ``parts`` value when none is given."""


def part_names(parts: str, **given: str | None) -> dict[str, str]:
    """The part of each kind in ``given`` (``encoder=None, navigator="depth"``): as given, else
    the one ``parts`` names (:data:`PARTS`); an unknown ``parts`` is a ``ValueError`` naming the
    accepted values."""
    chosen = lookup(PARTS, parts, "parts")
    return {kind: chosen[kind] if name is None else name for kind, name in given.items()}



def _parts_text(name: str) -> str:
    chosen = PARTS[name]
    return (f"the {chosen['encoder']} encoder, the {chosen['navigator']} navigator, the "
            f"{chosen['instruction_policy']} instruction policy")


PARTS_HELP = (f"learned (the default; the paper's agent, which sees the RGB frame and its pose "
              f"alone: {_parts_text('learned')}) or stand-in ({_parts_text('stand-in')}, which "
              f"also read the depth and semantic frames).")
"""What each ``--parts`` value runs, for the help of the commands that take it."""

PART_KINDS = ("encoder", "navigator", "instruction_policy")
"""The kinds of part ``--parts`` chooses (:data:`PARTS`' keys)."""


def _weights(kind: str) -> Any:
    """A released weights file option (metadata: the kind of file it gives)."""
    return field(default=None, metadata={"weights": kind})


def _flag(name: str) -> str:
    return f"--{name.replace('_', '-')}"


@dataclass(frozen=True)
class AgentParts:
    """The agent's parts and their weights (module docstring): one declaration of every option
    that chooses them. ``encoder``, ``navigator`` and ``instruction_policy`` left ``None`` are set
    once, when the options are made, to the part ``parts`` names."""

    parts: str = DEFAULT_PARTS
    """The agent's parts: learned (the default; the paper's agent, which sees the RGB frame and
    its pose alone: the pixels encoder, the learned navigator, the learned instruction policy) or
    stand-in (the semantic encoder, the depth navigator, the scripted skills, which also read the
    depth and semantic frames); --encoder, --navigator and --instruction-policy override it for
    their part."""
    encoder: str | None = None
    """The agent's encoder (MineCLIP's role; default: the one --parts names, pixels or
    semantic)."""
    navigator: str | None = None
    """The agent's navigator (Execute mode's travel and the explorer's low level; VPT-Nav's
    role; default: the one --parts names, learned or depth)."""
    navigator_weights: str | None = None
    """A weights file (mrsteve train navigator) the learned navigator runs with in place of the
    shipped one (every worker reads it from this path)."""
    instruction_policy: str | None = None
    """The agent's instruction policy (Execute mode; STEVE-1's whole policy; default: the one
    --parts names, learned or scripted)."""
    instruction_weights: str | None = None
    """A weights file (mrsteve train instruction-policy) the learned instruction policy runs
    with in place of the shipped one (every worker reads it from this path)."""
    mineclip_weights: str | None = _weights("mineclip")
    """MineCLIP's released attn.pth (MineDojo/MineCLIP): the weights of --encoder mineclip, and
    the text tower of --instruction-policy steve1."""
    vpt_nav_weights: str | None = _weights("vpt-nav")
    """VPT-Nav's released vpt_nav.weights (its .model beside it): the weights of --navigator
    vpt-nav."""
    steve1_weights: str | None = _weights("steve1")
    """STEVE-1's released steve1.weights (its .model beside it; Shalev-Lifshitz/STEVE-1): the
    policy of --instruction-policy steve1."""
    steve1_prior: str | None = _weights("steve1-prior")
    """STEVE-1's released steve1_prior.pt: the prior of --instruction-policy steve1."""

    one_of: ClassVar[Mapping[str, Mapping[str, Any]]] = MappingProxyType({
        "encoder": ENCODERS, "navigator": AGENT_NAVIGATORS,
        "instruction_policy": INSTRUCTION_POLICIES})
    """The registry each part option names one entry of: its help lists the names."""

    def __post_init__(self) -> None:
        for kind, name in part_names(self.parts, **{kind: getattr(self, kind)
                                                    for kind in PART_KINDS}).items():
            object.__setattr__(self, kind, name)
        self.check_parts()

    def check_parts(self) -> None:
        """Raise ``ValueError`` (one line) unless each part is registered, the navigator's
        weights are a learned navigator's, and the released weights files are those the parts
        need (an experiment whose options name several parts of a kind, one per row, checks them
        its own way)."""
        for option, registry in self.one_of.items():
            check_name(getattr(self, option), registry, option.replace("_", " "))
        navigator_weights_file(self.navigator_weights, self.navigator)  # its checks, its errors
        instruction_weights_file(self.instruction_weights, self.instruction_policy)
        check_released_weights(self, self.one_of)

    @property
    def weights_files(self) -> dict[str, str | None]:
        """The released weights files given, by kind (:data:`RELEASED_WEIGHTS`)."""
        return released_weights(self)

    @property
    def chosen(self) -> dict[str, str]:
        """The parts' names by kind (``encoder``, ``navigator``, ``instruction_policy``)."""
        return {kind: getattr(self, kind) for kind in PART_KINDS}


RELEASED_WEIGHTS: Mapping[str, str] = MappingProxyType({
    item.metadata["weights"]: item.name for item in fields(AgentParts)
    if "weights" in item.metadata})
"""The option (an :class:`AgentParts` field) giving the released weights file of each kind."""

AGENT_PARTS = tuple(item.name for item in fields(AgentParts))
"""The :class:`AgentParts` fields: the command-line options of every experiment that takes
agent parts."""


def released_weights(config: Any) -> dict[str, str | None]:
    """The released weights files an options object ``config`` gives, by kind
    (:data:`RELEASED_WEIGHTS`; a kind it has no option for is not given)."""
    return {kind: getattr(config, name, None) for kind, name in RELEASED_WEIGHTS.items()}


def check_released_weights(config: Any, one_of: Mapping[str, Mapping[str, Any]]) -> None:
    """Raise ``ValueError`` (one line) unless the parts ``config`` chooses (option to registry:
    ``one_of``) that run on released weights files have what they need installed and each file
    given, every file given is for one of them, and each is the checkpoint it is given as (read
    key by key, not loaded)."""
    parts = [(option, value, registry[value]) for option, registry in one_of.items()
             if (value := getattr(config, option))]
    chosen = [(f"the {value} {option.replace('_', ' ')}", spec) for option, value, spec in parts]
    for what, spec in chosen:
        if spec.files:
            entry_point(spec.build, what, spec.extra)  # else how to install what it needs
    given = released_weights(config)
    for option, value, spec in parts:
        unknown = [kind for kind in spec.files if kind not in RELEASED_WEIGHTS]
        if unknown:
            raise ValueError(f"{_flag(option)} {value} runs on released weights files of kinds "
                             f"no option gives ({', '.join(unknown)}); known kinds: "
                             f"{', '.join(RELEASED_WEIGHTS)}")
        missing = [_flag(RELEASED_WEIGHTS[kind]) for kind in spec.files if given[kind] is None]
        if missing:
            raise ValueError(f"{_flag(option)} {value} runs on released weights: give "
                             f"{' and '.join(f'{flag} FILE' for flag in missing)}")
    used = {kind for _, _, spec in parts for kind in spec.files}
    for kind, path in given.items():
        if path is not None and kind not in used:
            takers = [f"{_flag(option)} {name}" for option, registry in one_of.items()
                      for name, spec in registry.items() if kind in spec.files]
            raise ValueError(f"{_flag(RELEASED_WEIGHTS[kind])} {path} is for "
                             f"{' or '.join(takers)}, which this run does not use")
    released_files(chosen, given)
