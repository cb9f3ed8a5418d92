"""`mrsteve report`: the results page from runs, and the repository's page is the one its kept
runs give."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from mrsteve.cli import app
from mrsteve.eval.report import headline_block, load_run, report, verdict

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"

NAVIGATION = ["eval", "navigation", "--terrain", "flat,river", "--navigator", "learned,straight",
              "--max-steps", "60", "--episodes", "2", "--no-progress"]
"""A small navigation run: two navigators on two terrains (both reach every flat goal)."""


NAVIGATION_ROW = "| Navigation: VPT-Nav succeeds more than the heuristic, over the terrains |"
"""The first table's row of the navigation run's ordering."""


def as_planned(out: Path, *, dirty: bool = False) -> Path:
    """Mark the run at ``out`` as one whose plan was committed before it ran, from committed
    code (``dirty``: from uncommitted changes), as a run kept in the repository is."""
    manifest = json.loads((out / "manifest.json").read_text())
    git = {"commit": "c" * 40, "dirty": dirty}
    manifest |= {"git": git, "sittings": [{"started": manifest["started"], "git": git}],
                 "plan": {"file": "plan.json", "sha256": "0" * 64, "commit": "p" * 40,
                          "before_run": True}}
    (out / "manifest.json").write_text(json.dumps(manifest))
    return out


@pytest.fixture(scope="module")
def kept_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("kept") / "run"
    result = CliRunner().invoke(app, [*NAVIGATION, "--out", str(out)])
    assert result.exit_code == 0, result.output
    return as_planned(out)


def make_run(tmp_path: Path, kept_run: Path) -> Path:
    """A copy of the small navigation run, for a test to change."""
    return Path(shutil.copytree(kept_run, tmp_path / "run"))


def test_a_run_folder_gives_its_command_commit_and_table(tmp_path, kept_run):
    out = make_run(tmp_path, kept_run)
    (out / "NOTES.md").write_text("The river is crossed by swimming.\n")
    page = report([out], tmp_path / "docs" / "page.md")
    assert f"## {out}" in page
    assert "Navigation (paper appendix, navigator table)" in page
    assert ("`mrsteve eval navigation --terrain flat,river --navigator learned,straight "
            "--max-steps 60 --episodes 2 --out") in page
    assert "2 episodes per group (seeds 42 to 43)" in page
    assert "0.849 (96 %)" in page, "the paper's figure beside ours"
    assert "Ran at cccccccccc (planned at pppppppppp)" in page
    assert NAVIGATION_ROW in headline_block(page)


def test_notes_are_linked_relative_to_the_page_not_copied(tmp_path, kept_run):
    out = make_run(tmp_path, kept_run)
    (out / "NOTES.md").write_text("The river is crossed by swimming.\n")
    page = report([out], tmp_path / "docs" / "page.md")
    assert "The river is crossed by swimming." not in page
    assert f"[{out}/NOTES.md](../run/NOTES.md)" in page
    assert "NOTES.md" not in report([kept_run]), "no link without notes"


def test_a_page_of_ones_own_runs_has_no_repository_text_or_empty_glance(tmp_path, kept_run):
    """Without the baseline (here the straight navigator) there is no first table, and the
    page does not speak of folders kept in the repository."""
    out = tmp_path / "learned-only"
    result = CliRunner().invoke(app, [*NAVIGATION[:5], "learned", *NAVIGATION[6:], "--out",
                                      str(out)])
    assert result.exit_code == 0, result.output
    page = report([as_planned(out)])
    assert "## At a glance" not in page and "<!-- headline -->" not in page
    assert "repository" not in page
    assert "## At a glance" in report([kept_run])


def test_a_run_given_twice_is_reported_once(tmp_path, kept_run, monkeypatch):
    monkeypatch.chdir(kept_run.parent)
    page = report([kept_run, Path("run"), Path("run/../run")])
    assert page.count("`mrsteve eval navigation") == 1
    assert page.count(NAVIGATION_ROW) == 1


def test_a_json_output_is_read_as_its_file_or_its_folder(tmp_path):
    summary = tmp_path / "runs" / "nav.json"
    result = CliRunner().invoke(app, [*NAVIGATION, "--json", str(summary)])
    assert result.exit_code == 0, result.output
    page = report([summary])
    assert "0.849 (96 %)" in page and "--json " in page
    assert report([summary.parent]) == page.replace(str(summary), str(summary.parent))
    for same in ("nav.manifest.json", "nav.flat.learned.json"):
        assert report([summary.with_name(same)]).count("```text") == 1
    command = CliRunner().invoke(app, ["report", str(summary)])
    assert command.exit_code == 0 and "Ran at" in command.output
    (tmp_path / "runs" / "other.manifest.json").write_text("{}")
    with pytest.raises(ValueError, match="holds several runs"):
        report([summary.parent])


def test_a_run_made_with_other_data_files_is_flagged_stale(tmp_path, kept_run):
    out = make_run(tmp_path, kept_run)
    assert "Stale" not in report([out])
    manifest = json.loads((out / "manifest.json").read_text())
    group = next(iter(manifest["groups"].values()))
    path, _ = group["data"][0]
    group["data"][0] = [path, "0" * 64]
    (out / "manifest.json").write_text(json.dumps(manifest))
    page = report([out])
    assert f"**Stale:** made with other versions of `{path}`" in page
    assert "```text" in page, "a run given alone is printed whole"
    assert "## At a glance" not in page, "a stale run gives no first-table row"
    page = report([out, kept_run])
    stale_section = page[page.index(f"## {out}"):]
    assert "left out here" in stale_section and "```text" not in stale_section
    assert page.count("```text") == 1, "the current run keeps its table"
    assert NAVIGATION_ROW in headline_block(page)


def test_an_unplanned_run_is_flagged_and_brief_beside_a_planned_one(
        tmp_path, kept_run):
    out = make_run(tmp_path, kept_run)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["plan"] = None
    (out / "manifest.json").write_text(json.dumps(manifest))
    alone = report([out])
    assert "**Unplanned:** no plan was committed before it ran." in alone
    assert "```text" in alone, "a run given alone is printed whole"
    page = report([out, kept_run])
    section = page[page.index(f"## {out}"):]
    assert f"left out here: `mrsteve report {out}` prints it" in section
    assert "```text" not in section and page.count("```text") == 1
    assert "no plan committed before it ran" in page, "the index names the flag"
    other = make_run(tmp_path / "other", kept_run)
    manifest["plan"] = None
    (other / "manifest.json").write_text(json.dumps(manifest))
    both_unplanned = report([out, other])
    assert both_unplanned.count("```text") == 2, "kept whole where no planned run replaces it"


def test_a_task_where_every_agent_succeeds_every_time_is_flagged_at_ceiling(tmp_path, kept_run):
    out = make_run(tmp_path, kept_run)
    run = load_run(out)
    rates = {group.task: run.summaries[group.label]["success_rate"]["mean"]
             for group in run.groups if group.task.endswith("flat")}
    assert set(rates.values()) == {100.0}, "both navigators reach every flat goal"
    assert "**At ceiling** on 1 of 2 tasks (flat):" in report([out])
    for name in ("summary.flat.learned.json", "summary.flat.straight.json"):
        summary = json.loads((out / name).read_text())
        summary["metrics"]["success_rate"]["mean"] = 50.0 if "straight" in name else 100.0
        (out / name).write_text(json.dumps(summary))
    assert "At ceiling" not in report([out])


def test_exploration_tables_print_reference_figures_only_beside_comparable_runs():
    """Table 1's figures beside a run on Map 1 for 6K steps, WISE's beside 384 x 384 of the
    unbounded plains for 40K steps; another map, area or budget gets neither."""
    from mrsteve.eval.exploration import EXPLORATION, ExplorationTaskConfig

    metric = {"mean": 50.0, "stderr": 1.0, "n": 20}
    summary = {"map_coverage": metric, "revisit_count": metric}

    def table(**options) -> str:
        config = ExplorationTaskConfig(**options)
        groups = EXPLORATION.groups(config)
        return EXPLORATION.table(config, groups, {group.label: summary for group in groups})

    assert "84.42" in table() and "not comparable" not in table()
    for other in ({"steps": 3000}, {"world": "map2"}, {"world": "map1", "area": 60.0}):
        assert "84.42" not in table(**other) and "69" not in table(**other).split("\n")[2]
        assert "not comparable" in table(**other), other
    wise = {"world": "plains_unbounded", "area": 384.0, "steps": 40000}
    assert "WISE's report %" in table(**wise) and "not comparable" not in table(**wise)
    for other in ({"steps": 6000}, {"area": 200.0}):
        assert "WISE's report %" not in table(**{**wise, **other})
        assert "not comparable" in table(**{**wise, **other})


def page_of_short_run(tmp_path: Path, experiment: str, agents: str, steps: int) -> str:
    """The results page of a planned one-episode run of ``experiment``, shorter than the
    paper's."""
    out = tmp_path / experiment
    result = CliRunner().invoke(app, ["eval", experiment, "--agent", agents,
                                      "--steps", str(steps), "--episodes", "1", "--out", str(out),
                                      "--no-progress"])
    assert result.exit_code == 0, result.output
    return report([as_planned(out)])


def test_the_first_table_compares_only_runs_of_the_papers_set_up(tmp_path):
    page = page_of_short_run(tmp_path, "exploration", "count-based,go-explore", 100)
    assert "## At a glance" not in page and "84.42" not in page and "not comparable" in page


def test_long_task_counts_enter_the_first_table_only_over_the_papers_500k_steps(tmp_path):
    page = page_of_short_run(tmp_path, "long-instruction", "mrsteve,fm", 300)
    assert "Long-Instruction: tasks solved" not in page and "## At a glance" not in page
    assert "tasks solved" in page  # the run's own table is there


def test_an_ordering_holds_or_is_reversed_only_beyond_two_standard_errors():
    # Long-Instruction at 500K steps: 147.6 +- 10.3 against FIFO's 139.0 +- 5.5 is 0.7 SE
    stderr = math.hypot(10.3, 5.5)
    margin, word = verdict(147.6 - 139.0, stderr, (147.6, 139.0), ceiling=False)
    assert word == "within noise" and round(margin, 1) == 0.7
    assert verdict(169.0 - 139.0, stderr, (169.0, 139.0), ceiling=False)[1] == "holds"
    assert verdict(80.2 - 139.0, stderr, (80.2, 139.0), ceiling=False)[1] == "reversed"
    assert verdict(0.0, 0.0, (100.0, 100.0), ceiling=True)[1] == "at ceiling"
    assert verdict(0.0, 0.0, (100.0, 100.0), ceiling=False)[1] == "within noise"
    assert verdict(100.0, 0.0, (100.0, 0.0), ceiling=True) == (math.inf, "holds")
    assert verdict(10.0, math.nan, (60.0, 50.0), ceiling=True)[1] == "standard error unknown"


def test_the_first_table_lists_reversals_and_the_page_every_comparison(tmp_path, kept_run):
    """The straight navigator succeeding more than the learned one on the river is a reversal
    of the paper's ordering: the first table counts it and names it as the weakest margin, and
    the page lists the comparison."""
    out = make_run(tmp_path, kept_run)
    for name, rate in (("summary.river.learned.json", 10.0), ("summary.river.straight.json",
                                                             90.0)):
        summary = json.loads((out / name).read_text())
        summary["metrics"]["success_rate"] |= {"mean": rate, "stderr": 5.0}
        (out / name).write_text(json.dumps(summary))
    page = report([out])  # the values by seed no longer give these means: not paired
    river = next(line for line in headline_block(page).splitlines() if "crosses the river" in line)
    assert "| 1 | 0 | 0 | **1** | -11.3 (river: learned vs straight) |" in river
    assert "| river | learned | straight | 10.0 vs 90.0 | -11.3 | **reversed** |" in page


@pytest.mark.parametrize("why", ["no plan", "plan not committed", "dirty"])
def test_a_run_without_a_committed_plan_or_from_uncommitted_code_gives_no_first_table_row(
        tmp_path, kept_run, why):
    out = make_run(tmp_path, kept_run)
    manifest = json.loads((out / "manifest.json").read_text())
    if why == "no plan":
        manifest["plan"] = None
        flag, said = "no plan committed before it ran", "(no plan)"
    elif why == "plan not committed":
        manifest["plan"]["commit"] = None
        flag, said = "no plan committed before it ran", "(its plan was not committed"
    else:
        manifest["sittings"].append({"started": "later", "git": {"commit": "d" * 40,
                                                                  "dirty": True}})
        flag, said = "uncommitted changes", "dddddddddd with uncommitted changes"
    (out / "manifest.json").write_text(json.dumps(manifest))
    page = report([out])
    assert "## At a glance" not in page and said in page
    assert flag in report([out, kept_run]).split("## Runs")[1]


def test_only_the_default_agents_give_first_table_rows(tmp_path):
    """A run with another part or mode-selector option than the default (here the release's
    literal re-read) measures another agent: it is reported, but gives no first-table row."""
    from mrsteve.eval import report as reporting

    out = tmp_path / "literal"
    result = CliRunner().invoke(app, ["eval", "long-instruction", "--agent", "mrsteve,em",
                                      "--steps", "200", "--searched-radius", "0",
                                      "--episodes", "1", "--out", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    run = load_run(as_planned(out))
    assert not reporting.default_agents(run) and not reporting.run_flags(run)
    assert reporting.headline_runs([run]) == {}


def test_the_page_needs_finished_runs_of_this_version(tmp_path, kept_run):
    out = make_run(tmp_path, kept_run)
    manifest = json.loads((out / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps({**manifest, "wall_time_s": None}))
    with pytest.raises(ValueError, match="did not finish"):
        load_run(out)
    (out / "manifest.json").write_text(json.dumps(manifest))
    (out / "summary.flat.learned.json").unlink()
    with pytest.raises(ValueError, match="group flat.learned has no summary"):
        load_run(out)
    with pytest.raises(ValueError, match="not a run folder"):
        load_run(out / "plots")
    (tmp_path / "page.md").write_text("# Results\n")
    with pytest.raises(ValueError, match="neither a run folder"):
        load_run(tmp_path / "page.md")


def test_a_run_reads_without_the_weights_files_it_was_given(tmp_path):
    """A navigation run given --weights is reported from its manifest once the file is gone."""
    from tests.control.test_learned_navigator import small_weights

    weights = tmp_path / "nav.npz"
    small_weights().save(weights)
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["eval", "navigation", "--terrain", "flat",
                                      "--navigator", "learned", "--navigator-weights", str(weights),
                                      "--max-steps", "5", "--episodes", "1", "--out", str(out),
                                      "--no-progress"])
    assert result.exit_code == 0, result.output
    before = report([out])
    weights.unlink()
    run = load_run(out)
    trained = [group.spec.agent for group in run.groups if group.spec.agent.weights]
    assert [tree.weights for tree in trained] == [str(weights)]
    assert trained[0].weights_sha256 == small_weights().sha256
    assert report([out]) == before


def test_a_run_of_an_experiment_without_recorded_groups_reads_without_its_weights(tmp_path):
    """An exploration run given --navigator-weights is reported once the file is gone (its
    groups rebuilt without it, the weights it ran read from the manifest), and still as a run
    of other parts than the default."""
    from mrsteve.eval import report as reporting
    from tests.control.test_learned_navigator import small_weights

    weights = tmp_path / "nav.npz"
    small_weights().save(weights)
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["eval", "exploration", "--agent", "count-based",
                                      "--navigator-weights", str(weights), "--steps", "40",
                                      "--episodes", "1", "--out", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    before = report([out])
    assert small_weights().sha256[:8] in before
    weights.unlink()
    run = load_run(out)
    assert run.config.navigator_weights == str(weights)
    assert not reporting.default_agents(run)
    assert report([out]) == before


def test_the_command_writes_the_page_and_refuses_a_bad_output(tmp_path, kept_run):
    result = CliRunner().invoke(app, ["report", str(kept_run), "--out",
                                      str(tmp_path / "page.md")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "page.md").read_text().startswith("# Results")
    refused = CliRunner().invoke(app, ["report", str(kept_run), "--out", str(tmp_path)])
    assert refused.exit_code == 2 and "is a directory" in refused.output
    missing = CliRunner().invoke(app, ["report", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "nowhere does not exist: give a run folder" in missing.output


def test_the_published_page_is_generated_from_the_kept_runs(monkeypatch):
    """docs/results.md is exactly what `mrsteve report results/* --out docs/results.md` gives
    (run in the repository), so every number on it traces to a run folder kept there; it links
    each run's notes rather than copying them."""
    folders = sorted(path for path in RESULTS.iterdir() if path.is_dir())
    assert folders, "results/ holds the runs behind the published tables"
    tracked = subprocess.run(["git", "ls-files", "results"], cwd=ROOT, capture_output=True,
                             text=True)
    kept = tracked.stdout.split() if tracked.returncode == 0 else [
        str(path.relative_to(ROOT)) for path in RESULTS.rglob("*")]
    assert not [path for path in kept if path.endswith(".episodes.jsonl")], "records not kept"
    monkeypatch.chdir(ROOT)
    page = report([folder.relative_to(ROOT) for folder in folders], Path("docs/results.md"))
    assert page == (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    # one brief section per kept run (its notes linked, not copied): a budget per run
    assert len(page.splitlines()) < 28 * len(folders)
    assert page.count("](../results/") >= len(list(RESULTS.glob("*/NOTES.md")))


def test_the_page_never_replaces_a_file_of_a_run_it_reports(tmp_path, kept_run):
    out = make_run(tmp_path, kept_run)
    manifest = (out / "manifest.json").read_bytes()
    for target in (out / "manifest.json", out / "summary.json", out / "NOTES.md"):
        result = CliRunner().invoke(app, ["report", str(out), "--out", str(target)])
        assert result.exit_code == 2, result.output
        assert f"--out {target} would replace a file of the run at {out}" in result.output
    assert (out / "manifest.json").read_bytes() == manifest
    assert not (out / "NOTES.md").exists()
    beside = CliRunner().invoke(app, ["report", str(out), "--out", str(out / "page.md")])
    assert beside.exit_code == 0 and (out / "page.md").is_file(), "a page in the folder is fine"


@pytest.mark.parametrize("cut", ["manifest.json", "summary.json"])
def test_a_cut_short_run_file_is_named_in_one_line(tmp_path, kept_run, cut):
    out = make_run(tmp_path, kept_run)
    path = out / cut if cut == "manifest.json" else next(out.glob("summary.*.json"))
    path.write_text(path.read_text()[:40])
    result = CliRunner().invoke(app, ["report", str(out)])
    assert result.exit_code == 2
    (line,) = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert f"{path}: not JSON" in line and "cut short" in line
    assert "Traceback" not in result.output


def test_a_run_in_another_look_gives_no_first_table_row_and_leaves_the_days_run_its_rows(
        tmp_path, kept_run):
    """Held-out evaluation in the renderer's other looks is not the paper's set-up: such a run,
    named before the day's run, does not take the headline's place."""
    out = tmp_path / "a-held-out"
    result = CliRunner().invoke(app, [*NAVIGATION, "--look", "day,dusk", "--out", str(out)])
    assert result.exit_code == 0, result.output
    held_out = as_planned(out)
    assert "## At a glance" not in report([held_out])
    page = report([held_out, kept_run])
    assert NAVIGATION_ROW in page and f"| {kept_run.name} |" in page.split("## Every")[0]


def test_the_parts_line_names_the_weights_each_learned_part_ran(kept_run):
    from mrsteve.control.learned_navigator import load_shipped_navigator

    shipped = load_shipped_navigator().sha256[:8]
    page = " ".join(report([kept_run]).split())
    assert f"Parts: navigator learned ({shipped}) and straight." in page


def test_a_run_is_read_with_its_own_groups_when_its_selection_stands_for_more_now(tmp_path,
                                                                                 kept_run):
    """A run made with ``all`` reads back after a part was registered (``all`` names more now);
    a group this version cannot build is named."""
    out = make_run(tmp_path, kept_run)
    path = out / "manifest.json"
    manifest = json.loads(path.read_text())
    recorded = list(manifest["groups"])
    manifest["config"]["navigator"] = "learned,straight,depth"  # one more part selected now
    path.write_text(json.dumps(manifest))
    assert [group.label for group in load_run(out).groups] == recorded
    manifest["groups"]["river-teleport"] = manifest["groups"][recorded[0]]
    path.write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match="builds no group river-teleport from its config"):
        load_run(out)


def test_the_memory_grid_orderings_compare_only_their_capacity_and_grid_runs():
    """The appendix's memory-constraint orderings come from a grid run (its capacities) at
    0.1K frames only; the unlimited-memory orderings never from a grid run."""
    from types import SimpleNamespace

    from mrsteve.eval import report as reporting

    def group(agent, capacity, rate):
        memory = SimpleNamespace(capacity=capacity)
        label = f"beef-log-beef.{agent}.c{capacity}"
        return (SimpleNamespace(agent=agent, task="aba-sparse/beef-log-beef", label=label,
                                spec=SimpleNamespace(agent=SimpleNamespace(memory=memory))),
                {"success_rate": {"mean": rate, "stderr": 5.0}})

    cells = [group("mrsteve", 100, 90.0), group("fm", 100, 20.0), group("mrsteve", 500, 90.0),
             group("fm", 500, 95.0)]
    grid = SimpleNamespace(groups=[g for g, _ in cells],
                           summaries={g.label: s for g, s in cells},
                           config=SimpleNamespace(capacity="100,500,1000,2000,12000"))
    claim = next(c for c in reporting.CLAIMS if c.text.startswith("Place Event above FIFO"))
    rows = reporting.comparisons(claim, grid)
    assert [(row.where, row.verdict) for row in rows] == [("beef-log-beef, 100 frames", "holds")]
    assert claim.comparable(grid)
    unlimited = [c for c in reporting.CLAIMS
                 if c.experiment == "aba-sparse" and c.setup == reporting.UNLIMITED_MEMORY]
    assert unlimited and not any(c.comparable(grid) for c in unlimited)


def test_a_long_run_in_a_diagnostic_world_is_not_compared_with_the_paper():
    """Log regrowth and static herds are diagnostics beyond Minecraft: such a run gives no
    Figure 7 row."""
    from mrsteve.eval import report as reporting
    from mrsteve.eval.long_tasks import LongTaskConfig

    claims = [c for c in reporting.CLAIMS if c.experiment == "long-instruction"]
    paper = SimpleNamespace(config=LongTaskConfig())
    regrowing = SimpleNamespace(config=LongTaskConfig(log_regrowth=12_000))
    static = SimpleNamespace(config=LongTaskConfig(herds="static"))
    assert claims and all(c.comparable(paper) for c in claims)
    assert not any(c.comparable(regrowing) or c.comparable(static) for c in claims)


def test_groups_run_on_the_same_seeds_are_compared_seed_by_seed():
    """Two groups that kept their values by seed are compared by the per-seed differences: a
    lead that is small beside either group's spread but steady seed by seed holds."""
    from mrsteve.eval import report as reporting

    high = {"42": 380.0, "43": 424.0, "44": 410.0, "45": 267.0, "46": 323.0}
    low = {seed: value - 25.0 + (3.0 if int(seed) % 2 else -3.0) for seed, value in high.items()}

    def stat(values, keep_seeds):
        metric = reporting.mean_stderr(list(values.values()))
        return metric["mean"], metric["stderr"], values if keep_seeds else None

    paired = reporting.difference_variance(stat(high, True), stat(low, True))
    unpaired = reporting.difference_variance(stat(high, False), stat(low, True))
    assert math.isclose(paired, reporting.mean_stderr([3.0, -3.0, 3.0, -3.0, 3.0])["stderr"] ** 2)
    assert unpaired == stat(high, False)[1] ** 2 + stat(low, False)[1] ** 2
    lead = stat(high, True)[0] - stat(low, True)[0]
    assert verdict(lead, math.sqrt(paired), (0.0, 0.0), False)[1] == "holds"
    assert verdict(lead, math.sqrt(unpaired), (0.0, 0.0), False)[1] == "within noise"
    other_seeds = {str(int(seed) + 10): value for seed, value in low.items()}
    assert reporting.difference_variance(stat(high, True), stat(other_seeds, True)) == unpaired
    kept = {"mean": stat(high, True)[0], "n": 5, "by_seed": high}
    assert reporting.values_by_seed(kept) == high
    assert reporting.values_by_seed(kept | {"mean": 300.0}) is None  # a summary changed since
    assert reporting.values_by_seed(kept | {"n": 6}) is None


def strip_values_by_seed(path: Path) -> dict:
    """Drop ``by_seed`` from every metric of the summary at ``path`` (as summaries written
    before they kept it); returns the summary as it was."""
    summary = json.loads(path.read_text())
    older = json.loads(json.dumps(summary))
    for metric in older["metrics"].values():
        metric.pop("by_seed", None)
    path.write_text(json.dumps(older))
    return summary


def test_summaries_written_before_they_kept_seeds_get_them_from_their_records(tmp_path, kept_run):
    from mrsteve.eval.report import add_values_by_seed

    out = make_run(tmp_path, kept_run)
    first, second, *rest = sorted(out.glob("summary.*.json"))
    as_written = strip_values_by_seed(first)
    strip_values_by_seed(second)
    second.with_name(second.stem + ".episodes.jsonl").unlink()  # its records are gone
    untouched = {path: path.read_bytes() for path in (second, *rest)}
    assert add_values_by_seed([out]) == [
        f"{first}: values by seed added from its 2 episode records"]
    assert json.loads(first.read_text()) == as_written
    assert {path: path.read_bytes() for path in untouched} == untouched
    assert add_values_by_seed([out]) == [], "nothing is left to add"


def test_records_that_do_not_give_their_summary_change_no_file(tmp_path, kept_run):
    out = make_run(tmp_path, kept_run)
    first, second = sorted(out.glob("summary.*.json"))[:2]
    for path in (first, second):
        strip_values_by_seed(path)
    records = second.with_name(second.stem + ".episodes.jsonl")
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    lines[0]["spl"] = lines[0]["spl"] / 2 + 0.01  # another episode than the summary's
    records.write_text("".join(json.dumps(line) + "\n" for line in lines))
    before = {path: path.read_bytes() for path in out.iterdir() if path.is_file()}
    result = CliRunner().invoke(app, ["report", str(out), "--add-seeds"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert f"{second}: its records (2) do not give the summary's spl: mean" in line
    assert {path: path.read_bytes() for path in out.iterdir() if path.is_file()} == before
    records.unlink()
    added = CliRunner().invoke(app, ["report", str(out), "--add-seeds"])
    assert added.exit_code == 0, added.output
    assert f"{first}: values by seed added" in added.output and "# Results" in added.output
