#!/usr/bin/env python3
"""Draws every algorithm of `collc list` at p = 2..16 (roots 0 and p-1 where
the collective has one; every fourth picture as HTML) and checks each picture
with a real XML parser: well-formed, an <svg> root (or one inside the HTML
page), one lane per rank, ops numbered 0..n-1 on each rank (as many as the plan
has, counted from `collc gen` at p = 2, 5 and 16), every arrow between two
drawn ops, a format-v1 hover text on every op, and no HTML page fetching
anything (no src, href, @import or http URL). A p that the algorithm's
`require` refuses must be refused with that reason. Then two plans above 64
ranks must come out summarized. Prints one line per problem ("BAD: ...") and a
count.

With --topology T --bytes N every picture is drawn at its simulated times on T
(algorithms instantiated for it), and each is also checked by
svg-structure.py's geometry rules (boxes and arrows where their times put
them, ticks on the axis), which report nothing for a good picture.

usage: draw-library.py COLLC WORKDIR [--topology T --bytes N]
"""
import importlib.util
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
_spec = importlib.util.spec_from_file_location(
    "svg_structure", os.path.join(os.path.dirname(os.path.abspath(__file__)), "svg-structure.py"))
svg_structure = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(svg_structure)


def svg_root(path):
    root = ET.parse(path).getroot()
    return root if root.tag == NS + "svg" else root.find(".//" + NS + "svg")


def main(collc, work, sim):
    os.makedirs(work, exist_ok=True)
    listing = subprocess.run([collc, "list"], capture_output=True, text=True, check=True)
    algos = [l.split()[:2] for l in listing.stdout.splitlines()[1:] if l.strip()]
    bad, drawn, refused = [], 0, 0
    for coll, alg in algos:
        rooted = coll in ("reduce", "bcast")
        for p in range(2, 17):
            for root in sorted({0, p - 1}) if rooted else [0]:
                args = [alg, "--collective", coll, "--ranks", str(p)]
                if rooted:
                    args += ["--root", str(root)]
                what = f"{coll} {alg} p={p} root={root}"
                html = drawn % 4 == 3
                out = os.path.join(work, "pic." + ("html" if html else "svg"))
                res = subprocess.run([collc, "draw", *args, "-O0", *sim, "-o", out],
                                     capture_output=True, text=True)
                if res.returncode != 0:
                    if "require" in res.stderr and res.returncode == 2:
                        refused += 1
                    else:
                        bad.append(f"{what}: exit {res.returncode}: {res.stderr.strip()}")
                    continue
                drawn += 1
                if html:
                    # Self-contained: nothing fetched (the only URIs are XML namespaces).
                    text = open(out, encoding="utf-8").read()
                    if re.search(r"\b(src|href)\s*=|@import|https?://(?!www\.w3\.org/)", text):
                        bad.append(f"{what}: the HTML page refers to something outside it")
                try:
                    svg = svg_root(out)
                except ET.ParseError as e:
                    bad.append(f"{what}: not well-formed: {e}")
                    continue
                if svg is None:
                    bad.append(f"{what}: no <svg>")
                    continue
                if sim:
                    if svg.find(f".//{NS}g[@class='axis']") is None:
                        bad.append(f"{what}: no time axis")
                    for line in svg_structure.structure(out):
                        if line.startswith("GEOMETRY"):
                            bad.append(f"{what}: {line}")
                lanes = [g for g in svg.iter(NS + "g") if "lane" in g.get("class", "").split()]
                if len(lanes) != p:
                    bad.append(f"{what}: {len(lanes)} lanes")
                ops = {}
                for g in svg.iter(NS + "g"):
                    cls = g.get("class", "").split()
                    if "op" in cls:
                        r, i = int(g.get("data-rank")), int(g.get("data-op"))
                        ops.setdefault(r, set()).add(i)
                        t = g.find(NS + "title")
                        if t is None or "op: " + cls[1] not in t.text:
                            bad.append(f"{what}: op {r}:{i} lacks its format-v1 hover text")
                for r, idx in ops.items():
                    if r >= p or idx != set(range(len(idx))):
                        bad.append(f"{what}: rank {r} ops not numbered 0..n-1")
                for g in svg.iter(NS + "g"):
                    if "msg" in g.get("class", "").split():
                        for end in (g.get("data-from"), g.get("data-to")):
                            r, i = map(int, end.split(":"))
                            if i not in ops.get(r, ()):
                                bad.append(f"{what}: arrow end {end} is no op")
                # The op counts are library.test's (`collc gen NAME` takes no
                # machine, so it could not count two_level on one anyway).
                if p in (2, 5, 16) and root == 0 and not sim:
                    gen = subprocess.run([collc, "gen", *args], capture_output=True, text=True)
                    want = sum(1 for l in gen.stdout.splitlines() if " op: " in l)
                    got = sum(len(v) for v in ops.values())
                    if want != got:
                        bad.append(f"{what}: {got} ops drawn, the plan has {want}")
    for alg, p in (("ring", 65), ("rabenseifner", 100)):
        out = os.path.join(work, "big.svg")
        res = subprocess.run([collc, "draw", alg, "--ranks", str(p), "-O0", *sim, "-o", out],
                             capture_output=True, text=True)
        what = f"allreduce {alg} p={p}"
        if res.returncode != 0:
            bad.append(f"{what}: exit {res.returncode}: {res.stderr.strip()}")
            continue
        svg = svg_root(out)
        cells = [g for g in svg.iter(NS + "g") if "cell" in g.get("class", "").split()]
        lanes = [g for g in svg.iter(NS + "g") if "lane" in g.get("class", "").split()]
        ops = [g for g in svg.iter(NS + "g") if "op" in g.get("class", "").split()]
        if not cells or ops or not 1 < len(lanes) <= 33:
            bad.append(f"{what}: not summarized ({len(cells)} cells, {len(lanes)} lanes, "
                       f"{len(ops)} ops)")
        drawn += 1
    for b in bad:
        print("BAD:", b)
    print(f"drew {drawn} pictures, {refused} refused by require, {len(bad)} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
