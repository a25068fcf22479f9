#!/usr/bin/env python3
"""Prints the structure of a `collc draw` picture, one line per element, for
golden tests: the title, the lanes, every op (rank:op, kind, start, classes,
value label), every message arrow (from -> to, label, classes) and every mark.
Checks the geometry on the way, with a real XML parser: each op's box sits on
its rank's lane, boxes on a lane are ordered by their start, every arrow runs
from its send's box to its receive's box. A violation prints a line starting
with "GEOMETRY:". Reads SVG, or the HTML page around one.

A drawing at simulated times (it has a time axis) also prints the axis (unit,
pixels per unit, ticks), each op's end, each arrow's departure and arrival,
and the idle stretches, and checks that every box starts at x = origin +
start x scale and is (end - start) x scale wide (at least 2 px), within the
0.1 px the coordinates are rounded to; that a send's box sits just above its
lane's line and every other box just below; that every arrow leaves at its
departure inside its send's box and arrives at its arrival, no later than its
receive starts; that the ticks are where their times are.

usage: svg-structure.py FILE.svg|FILE.html
"""
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def classes(e):
    return e.get("class", "").split()


def structure(path):
    """The lines main prints (GEOMETRY: lines for violations)."""
    root = ET.parse(path).getroot()
    svg = root if root.tag == NS + "svg" else root.find(".//" + NS + "svg")
    if svg is None:
        return ["no <svg> element"]
    out = []
    title = svg.find(f"./{NS}text[@class='title']")
    out.append("title: " + (title.text if title is not None else "?"))
    axis = svg.find(f".//{NS}g[@class='axis']")
    sim = axis is not None
    if sim:
        origin, scale = float(axis.get("data-origin")), float(axis.get("data-scale"))
        ticks = []
        for t in axis.iter(NS + "g"):
            if "tick" in classes(t):
                ticks.append(t.get("data-t"))
                x = float(t.findall(NS + "line")[-1].get("x1"))
                if abs(x - (origin + float(t.get("data-t")) * scale)) > 0.06:
                    out.append(f"GEOMETRY: tick {t.get('data-t')} at x = {x}")
        out.append(f"axis: {axis.get('data-unit')}, {scale:.6g} px per {axis.get('data-unit')}, "
                   f"ticks {' '.join(ticks)}")
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
            lane = lanes.get(rank, -1)
            if not sim and abs(y + h / 2 - lane) > 0.6:
                out.append(f"GEOMETRY: op {key} is not on lane {rank}")
            if sim:
                want_y = lane - h if c[1] == "send" else lane
                if abs(y - want_y) > 0.06:
                    out.append(f"GEOMETRY: op {key} ({c[1]}) is not on its track of lane {rank}")
                start, end = float(g.get("data-start")), float(g.get("data-end"))
                if abs(x - (origin + start * scale)) > 0.06:
                    out.append(f"GEOMETRY: op {key} at x = {x}, its start {start} is at "
                               f"{origin + start * scale:.2f}")
                if abs(w - max(2, (end - start) * scale)) > 0.11:
                    out.append(f"GEOMETRY: op {key} is {w} px wide, {start}..{end} is "
                               f"{(end - start) * scale:.2f}")
            val = g.find(f"./{NS}text[@class='val']")
            title = g.find(NS + "title")
            if title is None or "{" not in title.text:
                out.append(f"GEOMETRY: op {key} has no format-v1 hover text")
            extra = " ".join(k for k in c if k not in ("op", c[1]))
            out.append(f"op {key} {c[1]} t={g.get('data-start')}"
                       + (f"..{g.get('data-end')} x={x:g}+{w:g}" if sim else "")
                       + (f" [{extra}]" if extra else "")
                       + (f" {val.text}" if val is not None else ""))
    by_lane = {}
    for key, (x, y, w, h) in boxes.items():
        by_lane.setdefault(key.split(":")[0], []).append((x, key))
    starts = {}
    for g in svg.iter(NS + "g"):
        if "op" in classes(g):
            starts[f"{g.get('data-rank')}:{g.get('data-op')}"] = float(g.get("data-start"))
    # Simulated starts closer than the 0.1 px coordinates resolve may sort either way.
    slack = 0.1 / scale if sim else 0
    for lane, items in by_lane.items():
        items.sort()
        for (xa, a), (xb, b) in zip(items, items[1:]):
            if starts[a] > starts[b] + slack:
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
                # At simulated times a message may arrive before its receive
                # starts (the combination waits for the core).
                right = bx + (bw if key == s or not sim else 0) + 0.6
                if not (bx - 0.6 <= px <= right and by - 1.6 <= py <= by + bh + 1.6) and \
                        not (sim and key == d and px <= right and by - 1.6 <= py <= by + bh + 1.6):
                    out.append(f"GEOMETRY: arrow {s} -> {d} does not touch op {key}")
            times = ""
            if sim:
                leaves, arrives = float(g.get("data-leaves")), float(g.get("data-arrives"))
                if abs(x1 - (origin + leaves * scale)) > 0.06 or \
                        abs(x2 - (origin + arrives * scale)) > 0.06:
                    out.append(f"GEOMETRY: arrow {s} -> {d} is not drawn from {leaves} to {arrives}")
                if arrives < leaves:
                    out.append(f"GEOMETRY: arrow {s} -> {d} arrives before it leaves")
                times = f" {g.get('data-leaves')}..{g.get('data-arrives')}"
            lbl = g.find(f"./{NS}text")
            extra = " ".join(k for k in c if k != "msg")
            out.append(f"msg {s} -> {d}" + times + (f" {lbl.text}" if lbl is not None else "")
                       + (f" [{extra}]" if extra else ""))
        if "mark" in c:
            note = g.find(NS + "text")
            out.append(f"mark {g.get('data-rank')}:{g.get('data-op')}"
                       + (" primary" if "primary" in c else "")
                       + (f" {note.text}" if note is not None else ""))
    for g in svg.iter(NS + "g"):
        if "idle" in classes(g):
            rect = g.find(NS + "rect")
            a, b = float(g.get("data-from")), float(g.get("data-to"))
            if abs(float(rect.get("x")) - (origin + a * scale)) > 0.06:
                out.append(f"GEOMETRY: idle stretch of rank {g.get('data-rank')} not at {a}")
            out.append(f"idle {g.get('data-rank')}: {g.get('data-from')}..{g.get('data-to')}")
    return out


def main(path):
    out = structure(path)
    print("\n".join(out))
    return 1 if out == ["no <svg> element"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
