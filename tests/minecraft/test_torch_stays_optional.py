"""torch is needed only by ``mrsteve.minecraft``: the package, its command line and the
``weights`` commands' help load without it."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
import mrsteve
from typer.testing import CliRunner
from mrsteve.cli import app
result = CliRunner().invoke(app, ["weights", "synth", "--help"])
assert result.exit_code == 0, result.output
import mrsteve.minecraft, mrsteve.minecraft.actions, mrsteve.minecraft.tokenizer
print(sorted(name for name in sys.modules if name == "torch" or name.startswith("torch.")))
"""


def test_the_core_and_the_command_line_do_not_import_torch():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]", done.stdout
