"""One self-contained HTML page of an episode (`mrsteve view`), drawn from its trace.

The page (no script, no file beside it: the map and the thumbnails are inline PNGs) shows the
top-down map with the path coloured by the agent's mode, the place cells its memory's frames lie
in, its event clusters (hover: their frames and steps) and every memory read (the chosen target
as a star, the first matches as dots; hover: the step, the prompt, the matches and the best
score); a timeline of the modes, the tasks (given, succeeded or not) and the reads; a gallery of
the event clusters, each with the agent's view nearest its centre frame; and the reads as a
table. The trace is :mod:`mrsteve.eval.trace`'s.
"""

from __future__ import annotations

import itertools
from html import escape
from pathlib import Path
from typing import Any

MODE_COLOURS = {"explore": "#4c9be8", "navigate": "#f5b041", "cam_adjust": "#af7ac5",
                "execute": "#e74c3c", None: "#9e9e9e"}
"""The colour of each mode (as the demo's plot)."""

MAP_WIDTH = 720
"""Width of the map on the page, in CSS pixels (the map scales to it)."""

TIMELINE_WIDTH = 960
GALLERY_CLUSTERS = 48
"""Event clusters shown with a thumbnail at most (the largest)."""
TABLE_READS = 400
"""Reads listed in the table at most (the first ones)."""

STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; max-width: 1100px; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 24px 0 8px; }
.facts { color: #555; } .legend span { display: inline-block; margin-right: 14px; }
.legend i { display: inline-block; width: 14px; height: 4px; margin-right: 4px;
            vertical-align: middle; }
svg { border: 1px solid #ccc; background: #f4f4f4; }
.gallery { display: flex; flex-wrap: wrap; gap: 10px; }
.gallery figure { margin: 0; width: 132px; font-size: 11px; color: #444; }
.gallery img { width: 128px; image-rendering: pixelated; border: 1px solid #999; }
table { border-collapse: collapse; font-size: 12px; }
td, th { border-bottom: 1px solid #ddd; padding: 2px 8px; text-align: right; }
td.text, th.text { text-align: left; }
"""


def mode_at(modes: list[list[Any]], t: int) -> str | None:
    """The mode of step ``t`` (the last run started at or before it)."""
    current = None
    for start, mode in modes:
        if start > t:
            break
        current = mode
    return current


class MapFrame:
    """World ``(x, z)`` to the map's pixels: the trace's map, or a frame around what is drawn."""

    def __init__(self, data: dict[str, Any]) -> None:
        page_map = data.get("map")
        if page_map:
            self.scale = float(page_map["scale"])
            self.corner = page_map["corner"]
            self.width = page_map["size"][0] * self.scale
            self.height = page_map["size"][1] * self.scale
            self.image = page_map["png"]
            return
        points = [p for p in data["path"]] + [r["target"] for r in data["reads"] if r["target"]]
        xs = [p[0] for p in points] or [0.0]
        zs = [p[1] for p in points] or [0.0]
        self.scale = 4.0
        self.corner = [min(xs) - 5, min(zs) - 5]
        self.width = (max(xs) - min(xs) + 10) * self.scale
        self.height = (max(zs) - min(zs) + 10) * self.scale
        self.image = None

    def __call__(self, point: list[float]) -> tuple[float, float]:
        return ((point[0] - self.corner[0]) * self.scale, (point[1] - self.corner[1]) * self.scale)


def map_svg(data: dict[str, Any]) -> str:
    """The map: terrain, place cells, event clusters, the path by mode, the reads."""
    frame = MapFrame(data)
    w, h, s = frame.width, frame.height, frame.scale
    parts = [(f'<svg id="map" viewBox="0 0 {w:.0f} {h:.0f}" width="{MAP_WIDTH}" '
              f'height="{MAP_WIDTH * h / max(w, 1):.0f}" xmlns="http://www.w3.org/2000/svg">')]
    if frame.image:
        parts.append(f'<image href="data:image/png;base64,{frame.image}" x="0" y="0" '
                     f'width="{w:.0f}" height="{h:.0f}" style="image-rendering:pixelated"/>')
    memory = data.get("memory") or {}
    cell = memory.get("cell_size")
    if cell:
        for corner in memory.get("cells", []):
            x, y = frame(corner)
            parts.append(f'<rect class="cell" x="{x:.1f}" y="{y:.1f}" width="{cell * s:.1f}" '
                         f'height="{cell * s:.1f}" fill="none" stroke="#ffffff" '
                         f'stroke-opacity="0.5" stroke-width="1"/>')
    parts += path_lines(data, frame)
    for cluster in memory.get("clusters", []):
        x, y = frame(cluster["at"])
        radius = max(2.0, min(12.0, cluster["frames"] ** 0.5)) * s / 4
        parts.append(
            f'<circle class="event" cx="{x:.1f}" cy="{y:.1f}" r="{radius:.1f}" fill="#2ecc71" '
            f'fill-opacity="0.55" stroke="#145a32" stroke-width="1"><title>event cluster '
            f'{cluster["id"]}: {cluster["frames"]} frames, steps {cluster["first"]}-'
            f'{cluster["last"]}</title></circle>')
    for read in data["reads"]:
        title = escape(read_text(read))
        for candidate in read.get("candidates_at", [])[1:]:
            x, y = frame(candidate)
            parts.append(f'<circle class="candidate" cx="{x:.1f}" cy="{y:.1f}" r="{s / 2:.1f}" '
                         f'fill="#ffffff" stroke="#000" stroke-width="0.5"><title>match of the '
                         f'read at step {read["t"]}</title></circle>')
        if read["target"]:
            x, y = frame(read["target"])
            parts.append(f'<path class="target" d="{star(x, y, 1.6 * s)}" fill="#ffeb3b" '
                         f'stroke="#000" stroke-width="1"><title>{title}</title></path>')
    if data["path"]:
        x, y = frame(data["path"][0])
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{s:.1f}" fill="#fff" stroke="#000">'
                     '<title>start</title></circle>')
    parts.append("</svg>")
    return "\n".join(parts)


def path_lines(data: dict[str, Any], frame: MapFrame) -> list[str]:
    """The path as polylines, one per run of points walked in one mode."""
    lines, run, run_mode = [], [], None
    every = data["path_every"]
    for index, point in enumerate(data["path"]):
        mode = mode_at(data["modes"], index * every)
        if run and mode != run_mode:
            lines.append((run_mode, run + [point]))
            run = []
        if not run:
            run_mode = mode
        run.append(point)
    if len(run) > 1:
        lines.append((run_mode, run))
    drawn = []
    for mode, points in lines:
        xy = " ".join(f"{x:.1f},{y:.1f}" for x, y in map(frame, points))
        drawn.append(f'<polyline class="path" data-mode="{mode}" points="{xy}" fill="none" '
                     f'stroke="{MODE_COLOURS.get(mode, "#000")}" stroke-width="{frame.scale / 2:.1f}" '
                     'stroke-linejoin="round"/>')
    return drawn


def star(x: float, y: float, r: float) -> str:
    """A five-pointed star's path around ``(x, y)``."""
    import math

    points = []
    for k in range(10):
        angle = math.pi / 2 + k * math.pi / 5
        radius = r if k % 2 == 0 else r * 0.45
        points.append(f"{x + radius * math.cos(angle):.1f},{y - radius * math.sin(angle):.1f}")
    return "M" + " L".join(points) + " Z"


def read_text(read: dict[str, Any]) -> str:
    """One read in words."""
    if not read["candidates"]:
        return f"step {read['t']}: '{read['prompt']}': no match, explore"
    return (f"step {read['t']}: '{read['prompt']}': {read['candidates']} matches, best score "
            f"{read['best_score']}, target seen at step {read['target_t']}")


def timeline_svg(data: dict[str, Any]) -> str:
    """Modes, tasks and reads over the episode's steps."""
    steps = max(1, data["steps"])
    w = TIMELINE_WIDTH

    def x(t: float) -> float:
        return w * t / steps

    parts = [(f'<svg id="timeline" viewBox="0 0 {w} 96" width="{w}" height="96" '
              'xmlns="http://www.w3.org/2000/svg">')]
    runs = data["modes"] + [[steps, None]]
    for (start, mode), (end, _) in itertools.pairwise(runs):
        parts.append(f'<rect class="mode" x="{x(start):.2f}" y="4" width="{max(x(end) - x(start), 0.5):.2f}" '
                     f'height="22" fill="{MODE_COLOURS.get(mode, "#000")}"><title>{mode or "-"}: steps '
                     f'{start}-{end}</title></rect>')
    for task in data["tasks"]:
        end = task["end"] if task["end"] is not None else steps
        colour = "#27ae60" if task["success"] else "#c0392b"
        outcome = "done" if task["success"] else ("given up" if task["end"] is not None
                                                  else "unfinished")
        parts.append(f'<rect class="task" x="{x(task["start"]):.2f}" y="34" '
                     f'width="{max(x(end) - x(task["start"]), 1):.2f}" height="22" fill="{colour}" '
                     f'stroke="#fff"><title>{escape(task["item"])}: steps {task["start"]}-{end}, '
                     f'{outcome}</title></rect>')
        if x(end) - x(task["start"]) > 40:
            parts.append(f'<text x="{x(task["start"]) + 3:.1f}" y="50" font-size="12" '
                         f'fill="#fff">{escape(task["item"])}</text>')
    for read in data["reads"]:
        height = 26 if read["candidates"] else 12
        parts.append(f'<line class="read" x1="{x(read["t"]):.2f}" x2="{x(read["t"]):.2f}" '
                     f'y1="{92 - height}" y2="92" stroke="#333" stroke-width="1">'
                     f'<title>{escape(read_text(read))}</title></line>')
    parts.append("</svg>")
    return "\n".join(parts)


def gallery(data: dict[str, Any]) -> str:
    """The largest event clusters, each with the view nearest its centre frame."""
    memory = data.get("memory") or {}
    thumbnails = data.get("thumbnails", {})
    clusters = sorted(memory.get("clusters", []), key=lambda c: -c["frames"])[:GALLERY_CLUSTERS]
    figures = []
    for cluster in clusters:
        image = thumbnails.get(str(cluster["thumbnail_t"]))
        if image is None:
            continue
        figures.append(
            f'<figure class="event-cluster"><img alt="view at step {cluster["thumbnail_t"]}" '
            f'src="data:image/png;base64,{image}"><figcaption>cluster {cluster["id"]}: '
            f'{cluster["frames"]} frames, steps {cluster["first"]}-{cluster["last"]} (view at '
            f'step {cluster["thumbnail_t"]})</figcaption></figure>')
    if not figures:
        return "<p>No event clusters with a view kept.</p>"
    return '<div class="gallery">' + "\n".join(figures) + "</div>"


def reads_table(data: dict[str, Any]) -> str:
    """The reads, first :data:`TABLE_READS`."""
    rows = [('<table id="reads"><tr><th>step</th><th class="text">prompt</th><th>matches</th>'
             '<th>best score</th><th>target (x, z)</th><th>target seen at</th></tr>')]
    for read in data["reads"][:TABLE_READS]:
        target = "-" if not read["target"] else f"{read['target'][0]:.1f}, {read['target'][1]:.1f}"
        rows.append(f'<tr><td>{read["t"]}</td><td class="text">{escape(read["prompt"])}</td>'
                    f'<td>{read["candidates"]}</td><td>{read["best_score"] if read["best_score"] is not None else "-"}</td>'
                    f'<td>{target}</td><td>{read["target_t"] if read["target_t"] is not None else "-"}</td></tr>')
    rows.append("</table>")
    more = len(data["reads"]) - TABLE_READS + data.get("reads_dropped", 0)
    if more > 0:
        rows.append(f"<p>{more} more reads not listed.</p>")
    return "\n".join(rows)


def render_page(data: dict[str, Any]) -> str:
    """The episode's page (module docstring) from its trace ``data``."""
    about = data.get("about", {})
    title = " ".join(str(about[key]) for key in ("agent", "task") if about.get(key)) or "episode"
    memory = data.get("memory")
    done = sum(task["success"] for task in data["tasks"])
    facts = [f"{data['steps']:,} steps", f"{done} of {len(data['tasks'])} tasks done",
             f"{len(data['reads']) + data.get('reads_dropped', 0)} memory reads"]
    if about.get("seed") is not None:
        facts.insert(0, f"seed {about['seed']}")
    if memory:
        capacity = memory["capacity"] if memory["capacity"] is not None else "unlimited"
        facts.append(f"{memory['kind']}: {memory['frames']:,} frames held (capacity {capacity}), "
                     f"{len(memory['clusters'])} event clusters, {len(memory['cells'])} place "
                     f"cells")
    legend = " ".join(f'<span><i style="background:{colour}"></i>{mode}</span>'
                      for mode, colour in MODE_COLOURS.items() if mode)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>
<style>{STYLE}</style></head><body>
<h1>{escape(title)}</h1>
<p class="facts">{escape("; ".join(facts))}</p>
<div class="legend">{legend}<span>&#9733; a read's target</span><span>&#9675; its other matches</span><span style="color:#1e8449">&#9679; an event cluster</span><span>&#9633; a place cell</span></div>
<h2>Map</h2>
{map_svg(data)}
<h2>Timeline</h2>
<p class="facts">Top: the mode at each step. Middle: each task, green when done, red when given up or unfinished. Bottom: each memory read (tall: it found a target).</p>
{timeline_svg(data)}
<h2>What the memory holds: event clusters</h2>
{gallery(data)}
<h2>Memory reads</h2>
{reads_table(data)}
</body></html>
"""


def view_path(source: Path, trace: Path) -> Path:
    """Where `mrsteve view` writes the page of ``trace`` found at ``source`` by default: beside
    a trace file, ``view.html`` in a demo's folder, ``views/`` in a run folder."""
    from mrsteve.eval.trace import TRACE_FILE

    name = trace.name.removesuffix(".json.gz") + ".html"
    if Path(source).is_file():
        return trace.with_name(name)
    if trace.name == TRACE_FILE:
        return Path(source) / "view.html"
    return Path(source) / "views" / name
