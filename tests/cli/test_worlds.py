"""`mrsteve worlds`: the world recipes as a table and as JSON."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from mrsteve.cli import app
from mrsteve.world.recipes import WORLD_RECIPES

PAPER_WORLDS = {
    "map1", "map2", "map3", "long_instruction", "long_navigation", "find_water", "zombie_spot",
    "two_houses", "plains", "flat", "plains_nav", "mountain", "river",
}  # fmt: skip


def test_json_lists_every_world_with_its_size_and_description():
    result = CliRunner().invoke(app, ["worlds", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert {row["name"] for row in rows} == set(WORLD_RECIPES) >= PAPER_WORLDS
    for row in rows:
        size = WORLD_RECIPES[row["name"]].size
        assert row["size"] == (None if size is None else list(size))
        assert row["description"]
    sizes = {row["name"]: row["size"] for row in rows}
    assert sizes["map1"] == [100, 100] and sizes["long_navigation"] == [200, 200]
    assert sizes["plains_unbounded"] is None


def test_table_has_a_line_per_world():
    result = CliRunner().invoke(app, ["worlds"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["name", "size", "description"]
    assert [line.split()[0] for line in lines[1:]] == list(WORLD_RECIPES)
    assert "100 x 100" in lines[1 + list(WORLD_RECIPES).index("map1")]
