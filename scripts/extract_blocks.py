#!/usr/bin/env python3
"""Extracts the shell and YAML code blocks of a Markdown file, for scripts/check-docs.

    scripts/extract_blocks.py FILE.md OUTDIR

Writes each fenced block whose info string starts with sh, bash or shell (kind "sh") or yaml
or yml (kind "yaml") to OUTDIR/NAME-LNNNN.sh or .yaml, where NNNN is the Markdown line of the
block's first line, and prints one line per block: KIND<TAB>LINE<TAB>PATH. Other blocks
(dockerfile, toml, text, none) are skipped. Fences are CommonMark's: three or more backticks or
tildes, indented by at most three spaces (that indentation is taken off the block's lines), closed
by a fence of the same character at least as long. Exit status 1 for a block left open.
Python's standard library only.
"""
import os
import re
import sys

KINDS = {"sh": "sh", "bash": "sh", "shell": "sh", "yaml": "yaml", "yml": "yaml"}
OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)")


def blocks(lines):
    """Yields (info, first_line, body_lines); raises ValueError for an unclosed fence."""
    i = 0
    while i < len(lines):
        m = OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = len(m.group(1)), m.group(2), m.group(3).lower()
        close = re.compile(r"^ {0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$")
        start = i + 1
        j = start
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        if j == len(lines):
            raise ValueError(f"line {i + 1}: code block not closed")
        body = []
        for line in lines[start:j]:
            # CommonMark: remove up to the opening fence's indentation.
            k = 0
            while k < indent and k < len(line) and line[k] == " ":
                k += 1
            body.append(line[k:])
        yield info, start + 1, body
        i = j + 1


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: scripts/extract_blocks.py FILE.md OUTDIR")
    path, out = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    os.makedirs(out, exist_ok=True)
    name = os.path.basename(path)
    try:
        found = list(blocks(lines))
    except ValueError as e:
        print(f"extract_blocks: {path}: {e}", file=sys.stderr)
        return 1
    for info, first, body in found:
        kind = KINDS.get(info)
        if kind is None:
            continue
        target = os.path.join(out, f"{name}-L{first:04d}.{kind}")
        with open(target, "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in body))
        print(f"{kind}\t{first}\t{target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
