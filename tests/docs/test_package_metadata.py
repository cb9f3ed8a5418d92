"""What `pip show mrsteve` tells a user: the license (with its file) and where the paper is."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_installed_metadata_names_the_license_its_file_and_the_papers_page():
    meta = metadata.metadata("mrsteve")
    assert meta["License-Expression"] == "MIT"
    assert "LICENSE" in (meta.get_all("License-File") or [])
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    urls = dict(entry.split(", ", 1) for entry in meta.get_all("Project-URL") or [])
    assert urls.get("Paper's project page") == "https://sites.google.com/view/mr-steve"
    assert meta["Author"]
