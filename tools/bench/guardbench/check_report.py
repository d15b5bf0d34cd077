"""python3 -m guardbench.check_report REPORT.md [WORKLOAD...]: exits non-zero
unless the report has its tables, a row for each workload named, and every
cell filled (no empty cell, no '?' where a figure is missing). The timings'
values are not checked: they depend on the machine."""
import sys

TABLES = ["## Wall time, and ratio to bare", "## guard `--mode trace` in detail", "## Files per directory",
          "## CPU time, and ratio to bare"]


def tables(text):
    """heading -> list of rows (lists of cells), separator lines left out."""
    out, heading = {}, None
    for line in text.splitlines():
        if line.startswith("## "):
            heading = line
        elif line.startswith("|") and heading and not line.startswith("|---"):
            out.setdefault(heading, []).append([c.strip() for c in line.strip().strip("|").split("|")])
    return out


def problems(text, workloads):
    found = tables(text)
    errs = ["missing table: " + t for t in TABLES if t not in found]
    for heading, rows in found.items():
        width = len(rows[0])
        for r in rows:
            if len(r) != width:
                errs.append("%s: row of %d cells, header has %d: %s" % (heading, len(r), width, r))
            if any(not c or "?" in c for c in r):
                errs.append("%s: unfilled cell in %s" % (heading, r))
    detail = found.get(TABLES[1], [])
    for w in workloads:
        if not any(r[0] == w for r in detail[1:]):
            errs.append("no row for workload " + w)
    if len(found.get(TABLES[2], [])) < 3:
        errs.append("fewer than two files-per-directory rows")
    return errs


if __name__ == "__main__":
    errs = problems(open(sys.argv[1]).read(), sys.argv[2:])
    for e in errs:
        print("check_report: " + e, file=sys.stderr)
    sys.exit(1 if errs else 0)
