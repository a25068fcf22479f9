#!/usr/bin/env python3
"""Renders collc's pictures in headless Chromium and checks what a person sees.

1. `collc draw ring --ranks 4 -O0 -o ring.html`, screenshot as PNG: the page is not
   blank; every op's box shows its kind's colour at the centre of where the
   SVG puts it, every arrow is drawn at its midpoint (grey, or red on the
   critical path), the lanes are drawn, the margin right of the last step is
   white. The picture's place in the page is found from the top-left box.
2. The same page through `chromium --dump-dom` (after its script ran): every op
   has its hover text (<title>) with its format-v1 line, the hover panel is
   there.
3. `collc explain --ranks 2..24 --sizes 8..1M -o choice.svg`, screenshot: each
   cell shows its algorithm's colour (the legend's), and the picture has as
   many distinct choices as the SVG says.
4. `collc draw rabenseifner --ranks 6 -O0 --topology topologies/cluster-3level.yaml
   --bytes 96K -o sim.svg` (ops at their simulated times), screenshot: every
   lane's line is drawn; every op box wide enough to see shows its kind's
   colour where its time puts it; every arrow is drawn at its midpoint and
   runs forward in time (its head right of its tail, and the receiver's box
   no earlier than where it arrives); the idle stretches show their shade;
   the time axis is drawn from 0 to the end with its tick marks at their
   times and a label under each; the critical path shows red.

Exit 0 when everything holds, 1 with one line per failure, 77 (skipped) when
there is no Chromium. usage: browser-check.py COLLC CHROMIUM WORKDIR [--ring-png FILE]
[--sim-png FILE] (copies of the screenshots of 1 and 4: docs/ring.png and
docs/rabenseifner-simulated.png come from them)
"""
import math
import os
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib

NS = "{http://www.w3.org/2000/svg}"
KIND_COLOR = {"send": "#2563eb", "recv": "#16a34a", "recv_reduce": "#ea580c",
              "reduce": "#9333ea", "copy": "#94a3b8"}
ARROW, CRITICAL, LANE, WHITE = "#4b5563", "#dc2626", "#d1d5db", "#ffffff"
IDLE, AXIS = "#fde7c4", "#374151"
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def rgb(hexcolor):
    return tuple(int(hexcolor[i:i + 2], 16) for i in (1, 3, 5))


# --- a PNG reader (8-bit RGB / RGBA, not interlaced: what Chromium writes) -------

def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise ValueError(f"{path}: unsupported PNG (depth {depth}, type {ctype})")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride = zlib.decompress(idat), w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


class Image:
    def __init__(self, path):
        self.w, self.h, self.bpp, self.rows = read_png(path)

    def at(self, x, y):
        x, y = math.floor(x + 0.5), math.floor(y + 0.5)
        if not (0 <= x < self.w and 0 <= y < self.h):
            return None
        r = self.rows[y]
        return tuple(r[x * self.bpp:x * self.bpp + 3])

    def near(self, x, y, color, tol, radius=1):
        """True when a pixel within `radius` is within `tol` of `color`."""
        want = rgb(color)
        for dy in range(-radius, radius + 1):
            for dx in range(-radius, radius + 1):
                p = self.at(x + dx, y + dy)
                if p and max(abs(p[i] - want[i]) for i in range(3)) <= tol:
                    return True
        return False

    def find(self, color, tol=2):
        """The top-most, then left-most pixel of `color`."""
        want = rgb(color)
        for y in range(self.h):
            r = self.rows[y]
            for x in range(self.w):
                p = r[x * self.bpp:x * self.bpp + 3]
                if max(abs(p[i] - want[i]) for i in range(3)) <= tol:
                    return x, y
        return None

    def colors(self):
        return {tuple(r[x * self.bpp:x * self.bpp + 3]) for r in self.rows[::3]
                for x in range(0, self.w, 3)}


# --- Chromium -------------------------------------------------------------------------

def chromium(exe, work, *args):
    profile = os.path.join(work, "profile")
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--force-device-scale-factor=1", "--no-first-run", "--disable-extensions",
           "--disable-background-networking", "--disable-sync", "--disable-component-update",
           "--mute-audio", "--user-data-dir=" + profile, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=240)


def screenshot(exe, work, url, png, width, height):
    if os.path.exists(png):
        os.remove(png)
    res = chromium(exe, work, f"--window-size={width},{height}", "--screenshot=" + png, url)
    if not os.path.exists(png):
        raise RuntimeError(f"chromium wrote no screenshot: {res.stderr[-500:]}")
    return Image(png)


def svg_of(path):
    root = ET.parse(path).getroot()
    return root if root.tag == NS + "svg" else root.find(".//" + NS + "svg")


# --- the checks ----------------------------------------------------------------------------

def check_plan_page(collc, exe, work, ring_png):
    page = os.path.join(work, "ring.html")
    # As written (-O0): the checks place what `collc gen` puts in the plan.
    subprocess.run([collc, "draw", "ring", "--ranks", "4", "-O0", "-o", page], check=True)
    svg = svg_of(page)
    sw, sh = float(svg.get("width")), float(svg.get("height"))
    png = os.path.join(work, "ring.png")
    img = screenshot(exe, work, "file://" + page, png, int(sw) + 40, int(sh) + 110)
    if ring_png:
        shutil.copyfile(png, ring_png)

    # Not blank: plenty of non-white pixels, all five colours of the ring's ops.
    colours = img.colors()
    if len(colours) < 20:
        fail(f"ring.html renders almost blank ({len(colours)} colours)")
    ops = [g for g in svg.iter(NS + "g") if "op" in g.get("class", "").split()]
    if len(ops) != 4 * (1 + 2 * 2 * 3):
        fail(f"ring at p = 4 has {len(ops)} op boxes in the SVG, expected 52")

    # Where the SVG sits in the page: the top-left op box is rank 0's copy,
    # the top-most, left-most pixel of the copy colour.
    first = min((g for g in ops if g.get("data-rank") == "0"), key=lambda g: int(g.get("data-op")))
    rect = first.find(NS + "rect")
    found = img.find(KIND_COLOR["copy"])
    if not found:
        fail("no copy box visible in ring.html")
        return
    dx = found[0] - float(rect.get("x")) - 1
    dy = found[1] - float(rect.get("y")) - 1
    if not (0 <= dx < 60 and 0 <= dy < 120):
        fail(f"the picture sits at an unlikely offset ({dx}, {dy})")

    seen = 0
    for g in ops:
        r = g.find(NS + "rect")
        cx = float(r.get("x")) + float(r.get("width")) / 2 + dx
        cy = float(r.get("y")) + float(r.get("height")) / 2 + dy
        kind = g.get("class").split()[1]
        if not img.near(cx, cy, KIND_COLOR[kind], tol=6):
            fail(f"op {g.get('data-rank')}:{g.get('data-op')} ({kind}) at ({cx:.0f}, {cy:.0f}) "
                 f"shows {img.at(cx, cy)}, expected {KIND_COLOR[kind]}")
        else:
            seen += 1
    arrows = 0
    for g in svg.iter(NS + "g"):
        cls = g.get("class", "").split()
        if "msg" not in cls:
            continue
        line = g.find(NS + "line")
        mx = (float(line.get("x1")) + float(line.get("x2"))) / 2 + dx
        my = (float(line.get("y1")) + float(line.get("y2"))) / 2 + dy
        colour = CRITICAL if "crit" in cls else ARROW
        if not img.near(mx, my, colour, tol=70, radius=2):
            fail(f"arrow {g.get('data-from')} -> {g.get('data-to')}: nothing {colour}-ish at "
                 f"its midpoint ({mx:.0f}, {my:.0f})")
        else:
            arrows += 1
    for g in svg.iter(NS + "g"):
        if "lane" in g.get("class", "").split():
            line = g.find(NS + "line")
            x, y = float(line.get("x1")) + 2 + dx, float(line.get("y1")) + dy
            if not img.near(x, y, LANE, tol=12):
                fail(f"lane {g.get('data-lane')} not drawn at ({x:.0f}, {y:.0f})")
            xr = float(line.get("x2")) + 12 + dx
            if not img.near(xr, y, WHITE, tol=2, radius=0):
                fail(f"right of lane {g.get('data-lane')} is not empty at ({xr:.0f}, {y:.0f})")
    print(f"ring.html: {seen} of {len(ops)} ops and {arrows} arrows where the plan puts them")


def check_dom(collc, exe, work):
    page = os.path.join(work, "ring.html")
    res = chromium(exe, work, "--dump-dom", "file://" + page)
    dom = res.stdout
    if "<svg" not in dom:
        fail("--dump-dom: no <svg> in the page")
        return
    titles = dom.count("<title>rank ")
    if titles != 52:
        fail(f"--dump-dom: {titles} ops with hover text, expected 52")
    for text in ("{step: 1, op: send, to: 1, buf: out, chunk: 0}",
                 "op: recv_reduce, from: 3, buf: out, chunk: 3, order: recv_first}",
                 "leaves x[0..3]", 'id="hover"'):
        if text.replace('"', "&quot;") not in dom and text not in dom:
            fail(f"--dump-dom: the page lacks {text!r}")
    print(f"dump-dom: {titles} ops with hover text")


def check_heatmap(collc, exe, work):
    path = os.path.join(work, "choice.svg")
    subprocess.run([collc, "explain", "--ranks", "2..24", "--sizes", "8..1M", "-o", path],
                   check=True)
    svg = svg_of(path)
    img = screenshot(exe, work, "file://" + path, os.path.join(work, "choice.png"),
                     int(float(svg.get("width"))), int(float(svg.get("height"))))
    cells = [g for g in svg.iter(NS + "g") if g.get("class") == "cell"]
    wrong, choices = 0, set()
    for g in cells:
        r = g.find(NS + "rect")
        cx = float(r.get("x")) + float(r.get("width")) / 2
        cy = float(r.get("y")) + float(r.get("height")) / 2
        choices.add(g.get("data-choice"))
        if not img.near(cx, cy, r.get("fill"), tol=6, radius=0):
            wrong += 1
            if wrong <= 5:
                fail(f"heatmap cell {g.get('data-row')},{g.get('data-col')} "
                     f"({g.get('data-choice')}) shows {img.at(cx, cy)}, expected {r.get('fill')}")
    if len(choices) < 3:
        fail(f"heatmap shows only {sorted(choices)}")
    print(f"choice.svg: {len(cells) - wrong} of {len(cells)} cells in their choice's colour, "
          f"{len(choices)} algorithms")


def check_simulated_page(collc, exe, work, sim_png):
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(work, "sim.svg")
    subprocess.run([collc, "draw", "rabenseifner", "--ranks", "6", "--topology",
                    os.path.join(src, "topologies", "cluster-3level.yaml"), "--bytes", "96K",
                    "-O0", "-o", path], check=True)
    svg = svg_of(path)
    png = os.path.join(work, "sim.png")
    img = screenshot(exe, work, "file://" + path, png, int(float(svg.get("width"))),
                     int(float(svg.get("height"))))
    if sim_png:
        shutil.copyfile(png, sim_png)
    groups = [(g, g.get("class", "").split()) for g in svg.iter(NS + "g")]
    lanes = [g for g, c in groups if "lane" in c]
    if len(lanes) != 6:
        fail(f"sim.svg: {len(lanes)} lanes, expected 6")
    for g in lanes:
        line = g.find(NS + "line")
        x, y = float(line.get("x1")) + 2, float(line.get("y1"))
        if not img.near(x, y, LANE, tol=12):
            fail(f"sim.svg: lane {g.get('data-lane')} not drawn at ({x:.0f}, {y:.0f})")

    axis = svg.find(f".//{NS}g[@class='axis']")
    if axis is None:
        fail("sim.svg: no time axis")
        return
    # Where a time is: the axis's scale, checked against its ticks below.
    origin, scale = float(axis.get("data-origin")), float(axis.get("data-scale"))
    boxes, seen = {}, 0
    for g, c in groups:
        if "op" not in c:
            continue
        r = g.find(NS + "rect")
        y, h = float(r.get("y")), float(r.get("height"))
        start, end = float(g.get("data-start")), float(g.get("data-end"))
        x, w = origin + start * scale, (end - start) * scale
        boxes[f"{g.get('data-rank')}:{g.get('data-op')}"] = (x, w, start)
        if w < 6:
            continue  # a receive's tick, or an op too short to sample inside
        # Halfway through its time, off its outline (2.5 px when red).
        if not img.near(x + w / 2, y + h / 2, KIND_COLOR[c[1]], tol=6):
            fail(f"sim.svg: op {g.get('data-rank')}:{g.get('data-op')} ({c[1]}) shows "
                 f"{img.at(x + w / 2, y + h / 2)} at ({x + w / 2:.0f}, {y + h / 2:.0f})")
        else:
            seen += 1
    if seen < 10:
        fail(f"sim.svg: only {seen} op boxes wide enough to check")

    arrows = 0
    for g, c in groups:
        if "msg" not in c:
            continue
        line = g.find(NS + "line")
        y1, y2 = float(line.get("y1")), float(line.get("y2"))
        x1 = origin + float(g.get("data-leaves")) * scale
        x2 = origin + float(g.get("data-arrives")) * scale
        colour = CRITICAL if "crit" in c else ARROW
        if not img.near((x1 + x2) / 2, (y1 + y2) / 2, colour, tol=70, radius=2):
            fail(f"sim.svg: arrow {g.get('data-from')} -> {g.get('data-to')} not drawn at its "
                 f"midpoint ({(x1 + x2) / 2:.0f}, {(y1 + y2) / 2:.0f})")
            continue
        bx, bw, _ = boxes[g.get("data-to")]
        if x2 < x1 or bx + 0.6 < x2:
            fail(f"sim.svg: arrow {g.get('data-from')} -> {g.get('data-to')} runs from x = {x1} "
                 f"to {x2}, its receive starts at {bx}")
            continue
        arrows += 1
    if arrows < 10:
        fail(f"sim.svg: only {arrows} arrows checked")

    idle = 0
    for g, c in groups:
        if "idle" in c:
            r = g.find(NS + "rect")
            x, y, w, h = (float(r.get(k)) for k in ("x", "y", "width", "height"))
            # Its lower quarter: below the receive track's boxes there is only the shade.
            if w >= 8 and img.near(x + w / 2, y + h - 2, IDLE, tol=6):
                idle += 1
            elif w >= 8 and not any(bx <= x + w / 2 <= bx + bw for bx, bw, _ in boxes.values()):
                fail(f"sim.svg: idle stretch of rank {g.get('data-rank')} at ({x + w / 2:.0f}, "
                     f"{y + h - 2:.0f}) shows {img.at(x + w / 2, y + h - 2)}")
    if idle == 0:
        fail("sim.svg: no idle stretch visible")

    aline = axis.find(NS + "line")
    ay, ax0, ax1 = float(aline.get("y1")), float(aline.get("x1")), float(aline.get("x2"))
    for f in (0.02, 0.5, 0.98):
        if not img.near(ax0 + f * (ax1 - ax0), ay, AXIS, tol=40):
            fail(f"sim.svg: the time axis is not drawn at ({ax0 + f * (ax1 - ax0):.0f}, {ay:.0f})")
    ticks = [t for t in axis.iter(NS + "g") if "tick" in t.get("class", "")]
    for t in ticks:
        x = origin + float(t.get("data-t")) * scale
        if not img.near(x, ay + 3, AXIS, tol=40):
            fail(f"sim.svg: tick {t.get('data-t')} not drawn at ({x:.0f}, {ay + 3:.0f})")
        # Its label: dark text pixels under the tick.
        if not any(img.near(x + dx, ay + 12, AXIS, tol=90, radius=3) for dx in (-8, 0, 8)):
            fail(f"sim.svg: tick {t.get('data-t')} has no label under it")
    if len(ticks) < 4:
        fail(f"sim.svg: {len(ticks)} ticks on the time axis")
    crit = 0
    for g, c in groups:
        if "op" in c and "crit" in c:
            r = g.find(NS + "rect")
            x, y, w = float(r.get("x")), float(r.get("y")), float(r.get("width"))
            if w >= 6:  # its red outline, on the top edge
                if img.near(x + w / 2, y, CRITICAL, tol=40):
                    crit += 1
                else:
                    fail(f"sim.svg: critical op {g.get('data-rank')}:{g.get('data-op')} has no "
                         f"red outline at ({x + w / 2:.0f}, {y:.0f})")
    if crit < 3:
        fail(f"sim.svg: only {crit} ops of the critical path show red")
    print(f"sim.svg: {seen} ops, {arrows} arrows forward in time, {idle} idle stretches, "
          f"{len(ticks)} ticks on a {axis.get('data-unit')} axis, {crit} critical ops in red")


def main():
    collc, exe, work = sys.argv[1:4]
    extra = dict(zip(sys.argv[4::2], sys.argv[5::2]))
    ring_png, sim_png = extra.get("--ring-png"), extra.get("--sim-png")
    if not shutil.which(exe):
        print(f"skipped: no Chromium ('{exe}'); scripts/bootstrap.sh installs Debian's chromium")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    check_plan_page(collc, exe, work, ring_png)
    check_dom(collc, exe, work)
    check_heatmap(collc, exe, work)
    check_simulated_page(collc, exe, work, sim_png)
    if failures:
        print(f"{len(failures)} failures")
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
