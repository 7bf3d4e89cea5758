"""Checks that every excerpt of a Markdown page still matches the file it
was copied from.

An excerpt is a fenced code block preceded by `<!-- from PATH -->`. PATH is
`output` (the file given by --output), a path under `build/example/` (taken
from --example-dir) or a path relative to --root. The block must occur in
that file as consecutive lines; a block line `...` stands for any number of
lines in between.

  python3 check_excerpts.py PAGE --root SRC --example-dir OUT --output LOG
"""
import argparse
import re
import sys


def excerpts(page):
    lines = open(page).read().split("\n")
    for i, line in enumerate(lines):
        m = re.fullmatch(r"<!-- from (\S+) -->", line.strip())
        if not m:
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
            yield i + 1, m.group(1), None
            continue
        body = []
        for line in lines[i + 2:]:
            if line.startswith("```"):
                break
            body.append(line)
        yield i + 1, m.group(1), body


def occurs(body, text):
    """Whether the segments of `body` (split at `...`) occur in order as
    runs of consecutive lines of `text`."""
    lines = text.split("\n")
    segments, cur = [], []
    for line in body:
        if line.strip() == "...":
            segments.append(cur)
            cur = []
        else:
            cur.append(line)
    segments.append(cur)
    at = 0
    for seg in segments:
        if not seg:
            continue
        found = False
        for start in range(at, len(lines) - len(seg) + 1):
            if lines[start:start + len(seg)] == seg:
                at, found = start + len(seg), True
                break
        if not found:
            return False, seg
    return True, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("page")
    ap.add_argument("--root", required=True)
    ap.add_argument("--example-dir", required=True)
    ap.add_argument("--output", required=True)
    a = ap.parse_args()
    failures = checked = 0
    for line, path, body in excerpts(a.page):
        if body is None:
            print(f"{a.page}:{line}: no code block after the 'from' comment")
            failures += 1
            continue
        if path == "output":
            source = a.output
        elif path.startswith("build/example/"):
            source = a.example_dir + "/" + path[len("build/example/"):]
        else:
            source = a.root + "/" + path
        ok, seg = occurs(body, open(source).read())
        checked += 1
        if not ok:
            failures += 1
            print(f"{a.page}:{line}: this excerpt of {path} no longer matches "
                  f"it; first lines not found:\n  " + "\n  ".join(seg[:3]))
    print(f"{checked} excerpts checked, {failures} stale")
    sys.exit(1 if failures or not checked else 0)


if __name__ == "__main__":
    main()
