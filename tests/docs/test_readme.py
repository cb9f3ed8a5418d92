"""The README's examples, and docs/api.md's, run as written (at small budgets), and its headline
table is the one the results page was generated with."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
API = ROOT / "docs" / "api.md"

BUDGETS = {"12_000": "400", "12_001": "401", "episodes=2": "episodes=1"}
"""Step and episode counts of the examples, cut for the test (the code is otherwise as written)."""


def code_blocks(language: str, page: Path = README) -> list[str]:
    text = page.read_text(encoding="utf-8")
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.DOTALL)


def test_the_python_examples_run_in_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "readme"}
    blocks = code_blocks("python", API)
    assert len(blocks) >= 5
    for number, block in enumerate(blocks, start=1):
        for written, small in BUDGETS.items():
            block = block.replace(written, small)
        exec(compile(block, f"docs/api.md python block {number}", "exec"), namespace)  # noqa: S102
    assert (tmp_path / "runs" / "aba-example" / "manifest.json").exists()


def shell_commands() -> list[list[str]]:
    """Every ``mrsteve ...`` command of the README's bash blocks (comments dropped)."""
    commands = []
    for block in code_blocks("bash"):
        for line in block.splitlines():
            line = line.split("#", 1)[0].strip()
            for part in line.split("&&"):
                words = part.split()
                if words and words[0] == "mrsteve":
                    commands.append(words[1:])
    return commands


def test_the_shell_examples_are_valid_command_lines(monkeypatch):
    """Each parses into its command with its options valid (the work itself is replaced: the
    demo and the sweeps are run by other tests, and no language model's server is asked)."""
    from mrsteve.cli import app
    from mrsteve.eval.experiment import Experiment
    from mrsteve.eval.llm_planner import LLMPlannerConfig

    ran = []

    def demo(*args, **kwargs):
        ran.append("demo")
        raise ValueError("stopped by the test")

    monkeypatch.setattr(Experiment, "run", lambda self, config, sweep, echo: ran.append(self))
    monkeypatch.setattr(LLMPlannerConfig, "check_server", lambda self, timeout=0: None)
    monkeypatch.setattr("mrsteve.eval.demo.run_demo", demo)
    commands = shell_commands()
    assert ["demo"] in commands
    for words in commands:
        result = CliRunner().invoke(app, words)
        if words[0] == "demo":
            assert "stopped by the test" in result.output
        else:
            assert result.exit_code == 0, (words, result.output)
    assert len(ran) == len(commands)


def test_the_readme_headline_is_the_results_pages():
    from mrsteve.eval.report import headline_block

    page = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    assert headline_block(README.read_text(encoding="utf-8")) == headline_block(page)


@pytest.mark.parametrize("word", ["issue", "session"])
def test_the_readme_speaks_of_the_package_and_the_paper(word):
    assert not re.search(rf"\b{word}s?\b", README.read_text(encoding="utf-8"), re.IGNORECASE)


def test_the_readme_is_for_users_and_short():
    """Under 300 lines: recipes and their history live in docs/training.md, every table in
    docs/results.md."""
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 300
    assert "(docs/training.md)" in text and "(docs/results.md)" in text


def test_the_readme_gives_one_speed_with_the_command_that_measures_it():
    text = " ".join(README.read_text(encoding="utf-8").split())
    speeds = re.findall(r"([\d,]+) steps per second", text)
    assert len(speeds) == 1, speeds
    sentence = text[text.index(f"{speeds[0]} steps per second"):].split(". ")[0]
    assert "`mrsteve bench agent`" in sentence


@pytest.mark.parametrize("page", ["README.md", "docs/results.md", "docs/training.md",
                                  "docs/worlds.md", "docs/api.md", "docs/plugins.md"])
def test_the_pages_links_lead_to_files_of_the_repository(page):
    path = ROOT / page
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", path.read_text(encoding="utf-8")):
        assert (path.parent / target).exists(), f"{page} links to {target}, which is missing"


@pytest.mark.parametrize("page", ["README.md", "docs/training.md", "docs/worlds.md",
                                  "docs/api.md", "docs/plugins.md"])
def test_the_modules_a_page_names_exist(page):
    """Every `mrsteve.<module>` or `mrsteve.<module>.<name>` a page names imports (a rename
    updates the pages)."""
    import importlib

    for name in re.findall(r"`(mrsteve(?:\.\w+)+)`", (ROOT / page).read_text(encoding="utf-8")):
        module, _, attribute = name, "", ""
        while True:
            try:
                found = importlib.import_module(module)
                break
            except ModuleNotFoundError:
                module, _, last = module.rpartition(".")
                attribute = f"{last}.{attribute}".rstrip(".")
        for part in filter(None, attribute.split(".")):
            found = getattr(found, part)


def test_the_quick_subset_the_readme_offers_names_folders_and_files_that_exist():
    from conftest import QUICK, TESTS

    assert "`python -m pytest -m quick`" in " ".join(README.read_text(encoding="utf-8").split())
    assert all((TESTS / entry).exists() for entry in QUICK), QUICK
