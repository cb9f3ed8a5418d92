"""A run's plan: what a run will measure, declared and committed before it runs.

``mrsteve eval ... --out DIR --plan`` writes ``DIR/plan.json`` (the command, the episodes and
seeds, and every group's task, agent and run-spec digest, which names the agent's whole
configuration tree with the digests of the files it loads) and runs nothing. Committed to git
before the run, it shows that the run's agents, capacities, seeds and episodes were fixed before
any result was seen. The same command without ``--plan`` then runs exactly that plan: a run whose
groups, episodes or seeds differ from the plan in its folder is refused before any episode.

The manifest records the plan's provenance (:func:`plan_provenance`): the commit that last
changed the plan file, whether the file was committed and unmodified when the run started, and
whether that commit is an ancestor of the commit the run's code came from. The results page
(:mod:`mrsteve.eval.report`) shows both commits and keeps a run without a committed plan, or run
from a modified tree, out of its first table.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mrsteve.eval.options import SweepOptions
from mrsteve.eval.spec import Group

PLAN = "plan.json"
"""A run folder's plan (``--json PATH`` keeps ``PATH-stem.plan.json`` beside it)."""

FORMAT = "mrsteve-run-plan"


def plan_path(sweep: SweepOptions) -> Path | None:
    """Where ``sweep``'s plan is kept: ``plan.json`` in the run folder, or beside ``--json``."""
    if sweep.out is not None:
        return Path(sweep.out) / PLAN
    if sweep.json_path is not None:
        return sweep.json_path.with_name(f"{sweep.json_path.stem}.{PLAN}")
    return None


def plan_of(experiment: str, groups: Sequence[Group], sweep: SweepOptions,
            command_line: str) -> dict[str, Any]:
    """The plan of a run of ``experiment``: its command, episodes, seeds and groups."""
    return {
        "format": FORMAT,
        "experiment": experiment,
        "command_line": command_line,
        "episodes": sweep.episodes,
        "seeds": [sweep.seed + i for i in range(sweep.episodes)],
        "groups": {group.label: {"task": group.task, "agent": group.agent,
                                 "digest": group.spec.digest} for group in groups},
    }


def read_plan(path: Path) -> dict[str, Any]:
    """The plan kept at ``path`` (a ``ValueError`` naming the file if it is not one)."""
    try:
        plan = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"{path}: not a readable run plan ({error})") from None
    if not isinstance(plan, dict) or plan.get("format") != FORMAT:
        raise ValueError(f"{path}: not a run plan of mrsteve eval --plan")
    return plan


def differences(kept: dict[str, Any], planned: dict[str, Any]) -> list[str]:
    """What a run ``planned`` would do otherwise than the ``kept`` plan says, one phrase each."""
    found = []
    if kept.get("experiment") != planned["experiment"]:
        found.append(f"it plans {kept.get('experiment')}, not {planned['experiment']}")
    for name in ("episodes", "seeds"):
        if kept.get(name) != planned[name]:
            found.append(f"{name} {kept.get(name)} planned, {planned[name]} given")
    ours, theirs = planned["groups"], kept.get("groups") or {}
    missing = [label for label in theirs if label not in ours]
    extra = [label for label in ours if label not in theirs]
    if missing:
        found.append(f"groups planned but not given: {', '.join(missing)}")
    if extra:
        found.append(f"groups given but not planned: {', '.join(extra)}")
    changed = [label for label in ours if label in theirs
               and theirs[label].get("digest") != ours[label]["digest"]]
    if changed:
        found.append(f"other configurations than planned for {', '.join(changed)} (another "
                     "version of a part, its weights or its options)")
    return found


def write_plan(path: Path, planned: dict[str, Any]) -> bool:
    """Write ``planned`` to ``path``; ``False`` when the same plan is there already. Another
    plan there is never replaced: a ``ValueError`` says what differs."""
    if path.exists():
        found = differences(read_plan(path), planned)
        if found:
            raise ValueError(f"{path} holds another plan ({'; '.join(found)}): delete it to plan "
                             "anew, or give another --out")
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(planned, indent=1) + "\n", encoding="utf-8")
    return True


def check_plan(path: Path | None, planned: dict[str, Any]) -> None:
    """Raise ``ValueError`` now, before any episode, if the plan at ``path`` (when there is one)
    is not the run about to start."""
    if path is None or not path.exists():
        return
    found = differences(read_plan(path), planned)
    if found:
        raise ValueError(f"this run is not the one {path} plans: {'; '.join(found)}; run "
                         f"the planned command ({read_plan(path).get('command_line')}) or give "
                         "another --out")


def _git(folder: Path, *args: str) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(["git", *args], cwd=folder, capture_output=True, text=True,
                              timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None


def plan_provenance(path: Path | None, code_commit: str | None) -> dict[str, Any] | None:
    """What the manifest records of the plan at ``path`` (``None`` without one): its file name
    and SHA-256, the commit that last changed it (``None`` unless it is committed and
    unmodified, in a git checkout), and whether that commit is ``code_commit`` or an ancestor
    of it (the plan was committed before the code the run came from)."""
    if path is None or not path.exists():
        return None
    record: dict[str, Any] = {
        "file": path.name,
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "commit": None,
        "before_run": None,
    }
    folder = path.parent.resolve()
    status = _git(folder, "status", "--porcelain", "--", path.name)
    logged = _git(folder, "log", "-1", "--format=%H", "--", path.name)
    if (status is None or logged is None or status.returncode or logged.returncode
            or status.stdout.strip() or not logged.stdout.strip()):
        return record  # not in a checkout, not committed, or changed since
    record["commit"] = logged.stdout.strip()
    if code_commit:
        ancestor = _git(folder, "merge-base", "--is-ancestor", record["commit"], code_commit)
        record["before_run"] = ancestor is not None and ancestor.returncode == 0
    return record
