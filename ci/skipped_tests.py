#!/usr/bin/env python3
"""The skipped tests of one ctest run, each with its reason, grouped by
reason: CTest's own output says "Skipped" and nothing more, so a run can
read "100% tests passed" with every perf test skipped and no reason shown.

    skipped_tests.py JUNIT.xml   (ctest --output-junit JUNIT.xml)

The reason is the test's own last line that says SKIP (a test says why it
skips: tests/unit/unit.h, expect_exit.cmake, the shell tests), else its last
line, without the runner, shape or program name before it, so that one
cause is one group; a test that printed nothing shows CTest's property that
made it a skip."""
import re
import sys
import textwrap
import xml.etree.ElementTree as ET

# a line that says why: SKIP or SKIPPED anywhere, or one that starts "skipped"
# (a summary's "0 skipped" mid-line is no reason)
SKIP_WORD = re.compile(r"\bSKIP(?:PED)?\b")
SKIP_START = re.compile(r"^skip(?:ped)?\b", re.IGNORECASE)
# what follows the word: ": why", " name: why" (a runner, a test, "lstmcheck"),
# " runner shape: why" (baseline compare's row: s20-l1-i128-h128-b16), or just why
LEAD = re.compile(r"^(?::\s*)?(?:[^\s:]+(?:\s+s\d[\w-]*)?:\s+)?")


def reason(case):
    lines = [l.strip() for l in (case.findtext("system-out") or "").splitlines()]
    said = [m for l in lines for m in [SKIP_WORD.search(l) or SKIP_START.search(l)] if m]
    if said:
        tail = said[-1].string[said[-1].end():].strip()
        return LEAD.sub("", tail, count=1).strip() or said[-1].string
    last = [l for l in lines if l]
    if last:  # no SKIP line: its last line (lstmcheck's own refusal, say)
        return LEAD.sub("", last[-1], count=1).strip() or last[-1]
    prop = case.find("skipped")
    return "(the test said nothing) " + (prop.get("message", "") if prop is not None else "")


def compact(names):
    """numerics.aten.basic numerics.aten.large -> numerics.aten.{basic,large};
    a name without a prefix, or whose last part could be misread in braces,
    stays whole."""
    by_prefix, whole = {}, []
    for name in sorted(names):
        head, _, leaf = name.rpartition(".")
        if head and leaf and not re.search(r"[{},\s]", leaf):
            by_prefix.setdefault(head, []).append(leaf)
        else:
            whole.append(name)
    shown = [f"{head}.{{{','.join(leaves)}}}" if len(leaves) > 1 else f"{head}.{leaves[0]}"
             for head, leaves in by_prefix.items()]
    return sorted(shown + whole)


def is_skip(case):
    """CTest's own skips: SKIP_RETURN_CODE, SKIP_REGULAR_EXPRESSION, a
    disabled test. Its other "not run" tests (no executable, a failed
    fixture, files missing) are failures, and its summary says so."""
    if case.get("status") == "disabled":
        return True
    prop = case.find("skipped")
    return case.get("status") == "notrun" and prop is not None and prop.get("message", "").startswith("SKIP_")


def main(argv):
    if len(argv) != 2:
        print("usage: skipped_tests.py JUNIT.xml", file=sys.stderr)
        return 2
    try:
        root = ET.parse(argv[1]).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"skipped_tests.py: {argv[1]}: {e}", file=sys.stderr)
        return 2
    groups = {}
    for case in root.iter("testcase"):
        if is_skip(case):
            groups.setdefault(reason(case), []).append(case.get("name") or "(no name)")
    total = sum(len(v) for v in groups.values())
    print(f"== skipped: {total} test{'s' * (total != 1)}" + (", by reason:" if total else ""))
    for why, names in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"  {why} [{len(names)}]")
        print(textwrap.fill(" ".join(compact(names)), width=100, initial_indent="      ",
                            subsequent_indent="      ", break_on_hyphens=False, break_long_words=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
