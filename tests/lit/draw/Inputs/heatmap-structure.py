#!/usr/bin/env python3
"""Prints a `collc explain` heatmap as text, one line per row: the row's label
and its cells' choices, run-length encoded ("recursive_doubling x8,
rabenseifner x5"), checking with a real XML parser that every cell has hover
text naming its choice and that the cells fill the grid in order. A picture
of several panels (--by model) prints each panel after a line with its
caption, and marks a cell with a dot by a "*" after its choice
("ring* x2": two dotted ring cells).

usage: heatmap-structure.py FILE.svg|FILE.html
"""
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def main(path):
    root = ET.parse(path).getroot()
    svg = root if root.tag == NS + "svg" else root.find(".//" + NS + "svg")
    print("title:", svg.find(f"./{NS}text[@class='title']").text)
    panels = {}
    for g in svg.iter(NS + "g"):
        if g.get("class") != "cell":
            continue
        k = int(g.get("data-panel", "0"))
        r, c, choice = int(g.get("data-row")), int(g.get("data-col")), g.get("data-choice")
        title = g.find(NS + "title").text
        if ": " + choice not in title:
            print(f"BAD: cell {k}:{r},{c} hover text does not name {choice}: {title}")
        rect = g.find(NS + "rect")
        dot = "*" if g.find(NS + "circle") is not None else ""
        panels.setdefault(k, {}).setdefault(r, []).append(
            (c, float(rect.get("x")), float(rect.get("y")), choice + dot, title.split(",")[0]))
    captions = {int(t.get("data-panel")): t.text for t in svg.iter(NS + "text")
                if t.get("class") == "caption"}
    for k in sorted(panels):
        if len(panels) > 1:
            print(f"panel {k}: {captions.get(k, '?')}")
        rows = panels[k]
        for r in sorted(rows):
            cells = sorted(rows[r])
            if [c for c, *_ in cells] != list(range(len(cells))):
                print(f"BAD: row {r} has gaps")
            if any(b[1] <= a[1] or b[2] != a[2] for a, b in zip(cells, cells[1:])):
                print(f"BAD: row {r} cells out of place")
            runs = []
            for _, _, _, choice, _ in cells:
                if runs and runs[-1][0] == choice:
                    runs[-1][1] += 1
                else:
                    runs.append([choice, 1])
            print(cells[0][4] + ": " + ", ".join(f"{c} x{n}" for c, n in runs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
