"""`mrsteve train encoder`, `navigator` and `instruction-policy`: train the learned parts (torch,
the ``train`` extra)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from mrsteve.cli.output import check_outputs, fail, fail_on_os_error, write_json
from mrsteve.train.runs import RENDER_STREAMS


def run_training(out: Path, weights_name: str, json_path: Path | None,
                 train: Callable[[Callable[[str], None]], Any]) -> Any:
    """What every training command does around its training: refuse an ``--out`` that is a
    file and outputs that cannot be written (before any work), run ``train(say)`` (its lines go
    to stderr), write the history to ``--json``, and turn bad settings, a missing torch and a
    full disk into one error line."""
    if out.exists() and not out.is_dir():
        raise fail(f"--out {out} exists and is not a folder; give a folder or a new path")
    check_outputs([out / weights_name, json_path])
    try:
        result = train(lambda line: typer.echo(line, err=True))
        if json_path is not None:
            write_json(json_path, {"weights_sha256": result.weights.sha256,
                                   "seconds": result.seconds, "history": result.history})
    except (ImportError, ValueError) as error:
        raise fail(str(error)) from None
    except OSError as error:  # a full disk, say
        raise fail_on_os_error(error) from None
    return result


ENCODER_EXAMPLES = """Examples:

  mrsteve train encoder --out runs/pixels

  mrsteve train encoder --out runs/pixels-small --clips 2000 --epochs 4

  mrsteve train encoder --out runs/pixels --json runs/pixels-history.json"""


def encoder(
    out: Annotated[Path, typer.Option(help="Run folder: rendered clips, checkpoints (a run "
                                           "resumes from them), curve.png, pixels.npz.")],
    clips: Annotated[int, typer.Option(min=1, help="Training clips rendered in the "
                                                   "calibration worlds.")] = 12000,
    epochs: Annotated[int, typer.Option(min=1, help="Passes over the clips.")] = 12,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the clips, batches and "
                                                  "initial weights.")] = 0,
    explored: Annotated[float, typer.Option(min=0.0, max=1.0, help="Share of the clips seen "
                                            "by MrSteve's explorer walking the worlds.")] = 0.3,
    any_pitch: Annotated[float, typer.Option(min=0.0, max=1.0, help="Share of the posed clips "
                                             "pitched anywhere from the sky to the feet.")] = 0.25,
    pairwise: Annotated[float, typer.Option(min=0.0, help="Weight of the pairwise sigmoid loss "
                                            "(SigLIP's) beside InfoNCE.")] = 1.0,
    threads: Annotated[int, typer.Option(min=1, help="torch CPU threads.")] = 2,
    progress: Annotated[bool, typer.Option("--progress/--no-progress",
                                           help="Show a progress bar.")] = True,
    json_path: Annotated[Path | None, typer.Option("--json", help="Also write the training "
                                                                  "history as JSON here.")] = None,
) -> None:
    """Train the pixel encoder (a video-text dual encoder over RGB clips) on clips of the
    procedural calibration worlds captioned from the renderer's ground truth; then calibrate its
    thresholds with `mrsteve calibrate --encoder pixels --weights OUT/pixels.npz --out FILE`."""

    def train(say):
        from mrsteve.train.encoder import TrainingConfig, train_encoder

        config = TrainingConfig(clips=clips, epochs=epochs, seed=seed, threads=threads,
                                explored=explored, any_pitch=any_pitch, pairwise=pairwise)
        return train_encoder(out, config, progress=progress, say=say)

    result = run_training(out, "pixels.npz", json_path, train)
    last = result.history[-1]
    typer.echo(f"wrote {out / 'pixels.npz'} (sha256 {result.weights.sha256[:16]}...) after "
               f"{result.seconds / 60:.1f} min: validation mAP {last['val_map']:.3f}, loss "
               f"{last['val_loss']:.3f}; curve in {out / 'curve.png'}")


NAVIGATOR_EXAMPLES = """Examples:

  mrsteve train navigator --out runs/navigator

  mrsteve train navigator --out runs/nav-trxl --conditioning trxl

  mrsteve train navigator --out runs/nav-small --segments 200 --dagger-rounds 1"""


def navigator(
    out: Annotated[Path, typer.Option(help="Run folder: demonstrations, checkpoints (a run "
                                           "resumes from them), curve.png, navigator.npz.")],
    segments: Annotated[int, typer.Option(min=1, help="Demonstration runs (one goal each) of "
                                                      "the depth navigator.")] = 2400,
    conditioning: Annotated[str, typer.Option(help="Where the goal enters: head (after the "
                                              "core), trxl (before it) or dual.")] = "head",
    finetune: Annotated[str, typer.Option(help="What fine-tuning trains: full, adapter "
                                          "(LoRA) or head.")] = "full",
    kl: Annotated[float, typer.Option(min=0.0, help="Weight of the KL divergence to the "
                                      "foundation policy while fine-tuning.")] = 1e-4,
    dagger_rounds: Annotated[int, typer.Option(min=0, help="Rounds of the policy walking "
                                               "with the depth navigator labelling.")] = 6,
    finetune_epochs: Annotated[int, typer.Option(min=1, help="Epochs of goal-conditioned "
                                                 "fine-tuning before DAgger.")] = 4,
    anneal_epochs: Annotated[int, typer.Option(min=0, help="Epochs over all the data after "
                                               "the last DAgger round with the learning rate "
                                               "falling linearly to zero (0: none).")] = 3,
    ppo_iterations: Annotated[int, typer.Option(min=0, help="PPO iterations after behaviour "
                                                "cloning (reward: progress to the goal, 100 "
                                                "on reaching it).")] = 0,
    nudge_rate: Annotated[float, typer.Option(min=0.0, max=0.99, help="Chance per "
                                              "demonstration step that the camera's pitch is "
                                              "pushed up for a few steps while the depth "
                                              "navigator labels (0: none).")] = 0.0,
    across_water: Annotated[float, typer.Option(min=0.0, max=1.0, help="Share of the goals "
                                                "drawn across water in a training world whose "
                                                "water separates the ground (its river), for "
                                                "the demonstrations and the DAgger walks.")
                            ] = 0.5,
    expert_map: Annotated[str, typer.Option(help="How long the depth navigator that "
                                            "demonstrates and labels keeps its height map: "
                                            "world (all the goals walked in one world) or "
                                            "segment (one goal, as the policy's memory "
                                            "does).")] = "world",
    give_up_goals: Annotated[int, typer.Option(min=0, help="Goals the final policy walks to "
                                               "(beyond, inside and away from the training "
                                               "worlds' walls) to fit its give-up head on the "
                                               "depth navigator's verdicts (0: no head).")] = 640,
    give_up_false_alarms: Annotated[float, typer.Option(min=0.0001, max=0.5, help="Share of "
                                                        "the give-up walks' within-reach steps "
                                                        "toward goals inside the walls that the "
                                                        "head, calibrated, flags.")] = 0.02,
    validation_segments: Annotated[int, typer.Option(min=0, help="Goals the final policy "
                                                     "walks to on fresh seeds of the training "
                                                     "worlds (0: no validation).")] = 200,
    foundation: Annotated[Path | None, typer.Option(help="An earlier run folder whose "
                                                    "foundation policy (and demonstrations) "
                                                    "this run starts from.")] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the worlds, goals, batches and "
                                                  "initial weights.")] = 0,
    threads: Annotated[int, typer.Option(min=1, help="torch CPU threads.")] = 2,
    workers: Annotated[int, typer.Option(min=1, help=f"Processes rendering demonstrations at "
                                                     f"once, at most {RENDER_STREAMS}: the data "
                                                     f"is drawn in {RENDER_STREAMS} seeded "
                                                     "streams, the same for any number.")] = 2,
    progress: Annotated[bool, typer.Option("--progress/--no-progress",
                                           help="Show a progress bar.")] = True,
    json_path: Annotated[Path | None, typer.Option("--json", help="Also write the training "
                                                                  "history as JSON here.")] = None,
) -> None:
    """Train the learned navigator (a goal-conditioned policy over RGB frames): a foundation
    policy cloned from the depth navigator's walks in the navigator training worlds, then
    goal-conditioned fine-tuning with a KL term to it and rounds of DAgger (and PPO), and a
    give-up head fitted on the depth navigator's verdicts; then ship it with
    `cp OUT/navigator.npz mrsteve/control/data/`."""

    def train(say):
        from mrsteve.train.navigator import NavigatorTrainingConfig, train_navigator
        from mrsteve.train.navigator_ppo import PPOConfig

        if foundation is not None and not (foundation / "foundation.npz").is_file():
            raise ValueError(f"--foundation {foundation} holds no foundation.npz; give the "
                             f"folder of an earlier `mrsteve train navigator` run")
        config = NavigatorTrainingConfig(
            segments=segments, conditioning=conditioning, finetune=finetune, kl=kl,
            dagger_rounds=dagger_rounds, finetune_epochs=finetune_epochs,
            anneal_epochs=anneal_epochs, seed=seed,
            threads=threads, workers=workers, validation_segments=validation_segments,
            nudge_rate=nudge_rate, across_water=across_water, expert_map=expert_map,
            give_up_goals=give_up_goals,
            give_up_false_alarms=give_up_false_alarms,
            foundation=None if foundation is None else str(foundation),
            ppo=PPOConfig(iterations=ppo_iterations))
        return train_navigator(out, config, progress=progress, say=say)

    result = run_training(out, "navigator.npz", json_path, train)
    typer.echo(f"wrote {out / 'navigator.npz'} (sha256 {result.weights.sha256[:16]}...) after "
               f"{result.seconds / 60:.1f} min; curve in {out / 'curve.png'}")


INSTRUCTION_EXAMPLES = """Examples:

  mrsteve train instruction-policy --out runs/instruction

  mrsteve train instruction-policy --out runs/inst-small --episodes 100

  mrsteve train instruction-policy --out runs/inst --dagger-rounds 0"""


def instruction_policy(
    out: Annotated[Path, typer.Option(help="Run folder: trajectories, checkpoints (a run "
                                           "resumes from them), curve.png, instruction.npz.")],
    episodes: Annotated[int, typer.Option(min=1, help="Episodes of the scripted skills "
                                                      "rendered, spread over the items.")] = 2400,
    episode_steps: Annotated[int, typer.Option(min=1, help="Steps per episode.")] = 300,
    epochs: Annotated[int, typer.Option(min=1, help="Epochs of goal-conditioned behaviour "
                                                    "cloning.")] = 12,
    until_last_success: Annotated[bool, typer.Option(
        "--until-last-success/--whole-episodes",
        help="Clone each episode up to the step its item last arrived, or whole.")] = True,
    nudge_rate: Annotated[float, typer.Option(min=0.0, max=0.99, help="Chance per rendered "
                                              "step that the camera's pitch is pushed off for "
                                              "a few steps while the skills label (0: none).")
                          ] = 0.02,
    dagger_rounds: Annotated[int, typer.Option(min=0, help="Rounds of DAgger after the "
                                               "cloning (beyond STEVE-1): the policy acts "
                                               "near a target, the scripted skills label as "
                                               "a teacher.")] = 10,
    foundation: Annotated[Path | None, typer.Option(help="Navigator weights (a foundation.npz "
                                                    "of `mrsteve train navigator`) whose image "
                                                    "encoder and core start the policy; default: "
                                                    "the shipped navigator's.")] = None,
    validation_episodes: Annotated[int, typer.Option(
        min=0, help="Episodes near a target, on fresh seeds of the training worlds, that pick "
                    "the guidance scales shipped with the weights, per set-up (0: none). A "
                    "finished run folder given another number only re-validates.")] = 200,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the worlds, batches and "
                                                  "initial weights.")] = 0,
    threads: Annotated[int, typer.Option(min=1, help="torch CPU threads.")] = 2,
    workers: Annotated[int, typer.Option(min=1, help=f"Processes rendering trajectories at "
                                                     f"once, at most {RENDER_STREAMS}: the data "
                                                     f"is drawn in {RENDER_STREAMS} seeded "
                                                     "streams, the same for any number.")] = 2,
    progress: Annotated[bool, typer.Option("--progress/--no-progress",
                                           help="Show a progress bar.")] = True,
    json_path: Annotated[Path | None, typer.Option("--json", help="Also write the training "
                                                                  "history as JSON here.")] = None,
) -> None:
    """Train the learned instruction policy (STEVE-1's recipe): goal-conditioned behaviour
    cloning of the scripted skills with hindsight-relabelled goals from the pixel encoder, a
    prior from the prompt's text embedding to a visual goal, then rounds of DAgger with the
    skills as the teacher; then ship it with `cp OUT/instruction.npz mrsteve/control/data/`."""

    def train(say):
        from mrsteve.train.instruction import InstructionTrainingConfig, train_instruction_policy

        if foundation is not None and not foundation.is_file():
            raise ValueError(f"--foundation {foundation} is not a file; give a navigator "
                             f"weights file such as RUN/foundation.npz")
        config = InstructionTrainingConfig(
            episodes=episodes, episode_steps=episode_steps, epochs=epochs,
            until_last_success=until_last_success, nudge_rate=nudge_rate,
            dagger_rounds=dagger_rounds, validation_episodes=validation_episodes, seed=seed,
            threads=threads, workers=workers,
            foundation=None if foundation is None else str(foundation))
        return train_instruction_policy(out, config, progress=progress, say=say)

    result = run_training(out, "instruction.npz", json_path, train)
    typer.echo(f"wrote {out / 'instruction.npz'} (sha256 {result.weights.sha256[:16]}...) after "
               f"{result.seconds / 60:.1f} min; curve in {out / 'curve.png'}")
