#!/usr/bin/env python3
"""Checks that a command's man page documents every option its --help lists
(the collc options, not LLVM's generic ones): prints "MISSING: --name" for
each one the page does not mention, then the count.

usage: man-options.py COLLC COMMAND PAGE.1
"""
import re
import subprocess
import sys


def main(collc, command, page):
    help_text = subprocess.run([collc, command, "--help"], capture_output=True, text=True,
                               check=True).stdout
    ours = help_text.split("collc options:", 1)[1]
    options = re.findall(r"^  (-{1,2}[a-z][a-z-]*)", ours, re.M)
    # The page spells a dash as \- in roff.
    man = open(page, encoding="utf-8").read().replace("\\-", "-")
    missing = [o for o in options if not re.search(re.escape(o) + r"(?![a-z-])", man)]
    for o in missing:
        print("MISSING:", o)
    print(f"{len(options)} options, {len(missing)} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
