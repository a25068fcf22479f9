#!/usr/bin/env python3
"""tools/collc-bench/summarize.py: combine several `collc-bench --json` runs.

Each run compares plan and native in the same process, interleaved, so the
per-run ratio plan_us / native_us is the paired measurement; across runs this
prints, per (ranks, algorithm, bytes), the median ratio with its min-max
range, the median times and the bandwidth bound.

  for i in 1 2 3 4 5; do mpirun -np 4 collc-bench --plan-dir DIR --json; done > runs.jsonl
  tools/collc-bench/summarize.py runs.jsonl [--markdown] [--pivot]

--pivot prints one line per (ranks, calls, bytes) with each algorithm's median
ratio and its range, beside the median native time and the bound.
"""
import json
import statistics
import sys
from collections import OrderedDict


def pivot(rows, markdown):
    """One line per (ranks, bytes, calls): native, bound, each algorithm's ratio."""
    algs = []
    for key in rows:
        name = key[3] if key[2] == "allreduce" else "%s@%s" % (key[3], rows[key][0].get("root"))
        if name not in algs:
            algs.append(name)
    lines = OrderedDict()
    for (ranks, nbytes, coll, alg, persistent), rs in sorted(
            rows.items(), key=lambda kv: (kv[0][0], kv[0][4], kv[0][1])):
        name = alg if coll == "allreduce" else "%s@%s" % (alg, rs[0].get("root"))
        line = lines.setdefault((ranks, persistent, nbytes), {"native": [], "bound": []})
        ratios = [r["plan_us"] / r["native_us"] for r in rs if r["native_us"] > 0]
        line[name] = "%.2f (%.2f-%.2f)" % (statistics.median(ratios), min(ratios), max(ratios))
        line["native"] += [r["native_us"] for r in rs]
        line["bound"] += [r["bound_us"] for r in rs]
    order = ["binary_tree", "recursive_doubling", "rabenseifner", "binary_blocks", "ring"]
    algs.sort(key=lambda a: (order.index(a) if a in order else len(order), a))
    head = ["ranks", "calls", "bytes", "native_us", "bound_us"] + algs
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    else:
        print("  ".join(head))
    for (ranks, persistent, nbytes), line in lines.items():
        cells = [str(ranks), "persistent" if persistent else "blocking", str(nbytes),
                 "%.2f" % statistics.median(line["native"]),
                 "%.3f" % statistics.median(line["bound"])] + [line.get(a, "-") for a in algs]
        print(("| " + " | ".join(cells) + " |") if markdown else "  ".join(cells))


def main(argv):
    markdown = "--markdown" in argv
    by_size = "--pivot" in argv
    paths = [a for a in argv[1:] if a not in ("--markdown", "--pivot")]
    rows = OrderedDict()
    for path in paths or ["-"]:
        stream = sys.stdin if path == "-" else open(path)
        for line in stream:
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if r.get("native_us") is None or r.get("plan_us") is None:
                continue
            key = (r["ranks"], r["bytes"], r["collective"], r["algorithm"],
                   r.get("persistent", False))
            rows.setdefault(key, []).append(r)
    if not rows:
        print("no timed rows", file=sys.stderr)
        return 1
    if by_size:
        pivot(rows, markdown)
        return 0
    head = ["ranks", "bytes", "algorithm", "calls", "runs", "native_us", "plan_us",
            "ratio (median)", "ratio min-max", "bound_us"]
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    else:
        print("%5s %9s %-20s %-10s %4s %10s %10s %14s %13s %9s" % tuple(head))
    for (ranks, nbytes, coll, alg, persistent), rs in sorted(
            rows.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][4], kv[0][3])):
        ratios = [r["plan_us"] / r["native_us"] for r in rs if r["native_us"] > 0]
        name = alg if coll == "allreduce" else "%s@%s" % (alg, rs[0].get("root"))
        cells = [str(ranks), str(nbytes), name, "persistent" if persistent else "blocking",
                 str(len(rs)),
                 "%.2f" % statistics.median(r["native_us"] for r in rs),
                 "%.2f" % statistics.median(r["plan_us"] for r in rs),
                 "%.2f" % statistics.median(ratios),
                 "%.2f-%.2f" % (min(ratios), max(ratios)),
                 "%.3f" % statistics.median(r["bound_us"] for r in rs)]
        if markdown:
            print("| " + " | ".join(cells) + " |")
        else:
            print("%5s %9s %-20s %-10s %4s %10s %10s %14s %13s %9s" % tuple(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
