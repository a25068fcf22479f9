#!/usr/bin/env python3
"""Prints the structure of a `collc draw` picture, one line per element, for
golden tests: the title, the lanes, every op (rank:op, kind, start, classes,
value label), every message arrow (from -> to, label, classes) and every mark.
Checks the geometry on the way, with a real XML parser: each op's box sits on
its rank's lane, boxes on a lane are ordered by their start, every arrow runs
from its send's box to its receive's box. A violation prints a line starting
with "GEOMETRY:". Reads SVG, or the HTML page around one.

usage: svg-structure.py FILE.svg|FILE.html
"""
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def classes(e):
    return e.get("class", "").split()


def main(path):
    root = ET.parse(path).getroot()
    svg = root if root.tag == NS + "svg" else root.find(".//" + NS + "svg")
    if svg is None:
        print("no <svg> element")
        return 1
    out = []
    title = svg.find(f"./{NS}text[@class='title']")
    out.append("title: " + (title.text if title is not None else "?"))
    lanes = {}
    for g in svg.iter(NS + "g"):
        if "lane" in classes(g):
            line = g.find(NS + "line")
            lanes[int(g.get("data-lane"))] = float(line.get("y1"))
            out.append(f"lane {g.get('data-lane')}: {g.find(NS + 'text').text}")
    boxes = {}
    for g in svg.iter(NS + "g"):
        c = classes(g)
        if "op" in c:
            rect = g.find(NS + "rect")
            x, y = float(rect.get("x")), float(rect.get("y"))
            w, h = float(rect.get("width")), float(rect.get("height"))
            key = f"{g.get('data-rank')}:{g.get('data-op')}"
            boxes[key] = (x, y, w, h)
            rank = int(g.get("data-rank"))
            if abs(y + h / 2 - lanes.get(rank, -1)) > 0.6:
                out.append(f"GEOMETRY: op {key} is not on lane {rank}")
            val = g.find(f"./{NS}text[@class='val']")
            title = g.find(NS + "title")
            if title is None or "{" not in title.text:
                out.append(f"GEOMETRY: op {key} has no format-v1 hover text")
            extra = " ".join(k for k in c if k not in ("op", c[1]))
            out.append(f"op {key} {c[1]} t={g.get('data-start')}"
                       + (f" [{extra}]" if extra else "")
                       + (f" {val.text}" if val is not None else ""))
    by_lane = {}
    for key, (x, y, w, h) in boxes.items():
        by_lane.setdefault(key.split(":")[0], []).append((x, key))
    starts = {}
    for g in svg.iter(NS + "g"):
        if "op" in classes(g):
            starts[f"{g.get('data-rank')}:{g.get('data-op')}"] = float(g.get("data-start"))
    for lane, items in by_lane.items():
        items.sort()
        for (xa, a), (xb, b) in zip(items, items[1:]):
            if starts[a] > starts[b]:
                out.append(f"GEOMETRY: op {a} drawn left of {b} but starts later")
    for g in svg.iter(NS + "g"):
        c = classes(g)
        if "msg" in c:
            line = g.find(NS + "line")
            x1, y1 = float(line.get("x1")), float(line.get("y1"))
            x2, y2 = float(line.get("x2")), float(line.get("y2"))
            s, d = g.get("data-from"), g.get("data-to")
            for key, (px, py) in ((s, (x1, y1)), (d, (x2, y2))):
                bx, by, bw, bh = boxes[key]
                if not (bx - 0.6 <= px <= bx + bw + 0.6 and by - 1.6 <= py <= by + bh + 1.6):
                    out.append(f"GEOMETRY: arrow {s} -> {d} does not touch op {key}")
            lbl = g.find(f"./{NS}text")
            extra = " ".join(k for k in c if k != "msg")
            out.append(f"msg {s} -> {d}" + (f" {lbl.text}" if lbl is not None else "")
                       + (f" [{extra}]" if extra else ""))
        if "mark" in c:
            note = g.find(NS + "text")
            out.append(f"mark {g.get('data-rank')}:{g.get('data-op')}"
                       + (" primary" if "primary" in c else "")
                       + (f" {note.text}" if note is not None else ""))
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
