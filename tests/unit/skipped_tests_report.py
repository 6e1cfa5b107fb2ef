"""ci/skipped_tests.py on a JUnit file made here: every skipped test is
listed under its own reason (the runner, shape or program name before it
taken off, so one cause is one group), whole names kept; a passed test and
CTest's "Not Run" failures are not listed; a summary's "0 skipped" is no
reason; a test that printed nothing shows the CTest property that made it
a skip.
    skipped_tests_report.py SOURCE_DIR"""
import os
import subprocess
import sys
import tempfile

SKIP77 = "SKIP_RETURN_CODE=77"
CASES = [  # name, status, CTest's skip message (None: none), output
    ("numerics.aten.basic", "notrun", SKIP77, "SKIP aten: no CUDA device: no driver\n"),
    ("numerics.cudnn.large", "notrun", SKIP77, "SKIP cudnn: no CUDA device: no driver\n"),
    ("perf.cudnn.default", "notrun", "SKIP_RETURN_CODE=3", "lstmcheck: no CUDA device: no driver\n"),
    ("perf.cpu_dropout.small", "notrun", "SKIP_RETURN_CODE=3",
     "runner shape\nSKIP cpu_dropout s20-l1-i128-h128-b16: side A unknown runner\n0 slower; 1 not compared here\n"),
    ("numerics.onednn.varlen", "notrun", "SKIP_REGULAR_EXPRESSION_MATCHED",
     "T=7 varlen: SKIP onednn: onednn takes no variable-length batches\nonednn/varlen: 0 passed, 0 skipped\n"),
    ("unit.silent", "notrun", SKIP77, ""),
    ("alpha", "notrun", SKIP77, "SKIP: no dot in the name\n"),
    ("beta", "notrun", SKIP77, "SKIP: no dot in the name\n"),
    ("unit.passes", "run", None, "SKIP this line belongs to a test that ran\n"),
    # CTest's "Not Run" failures are failures, not skips
    ("unit.no_program", "notrun", "Unable to find executable: /nonexistent", ""),
    ("unit.fixture_gone", "notrun", "Fixture dependency failed", ""),
]


def junit(path):
    with open(path, "w") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="x" tests="%d">\n' % len(CASES))
        for name, status, message, out in CASES:
            skipped = '<skipped message="%s"/>' % message if message else ""
            f.write('<testcase name="%s" status="%s">%s<system-out>%s</system-out></testcase>\n'
                    % (name, status, skipped, out))
        f.write("</testsuite>\n")


def main():
    script = os.path.join(sys.argv[1], "ci", "skipped_tests.py")
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "junit.xml")
        junit(path)
        out = subprocess.run([sys.executable, script, path], capture_output=True, text=True, check=True).stdout
    want = [
        "== skipped: 8 tests, by reason:",
        "  no CUDA device: no driver [3]",
        "      numerics.aten.basic numerics.cudnn.large perf.cudnn.default",
        "  side A unknown runner [1]",
        "      perf.cpu_dropout.small",
        "  onednn takes no variable-length batches [1]",
        "  (the test said nothing) SKIP_RETURN_CODE=77 [1]",
        "      unit.silent",
        "  no dot in the name [2]",
        "      alpha beta",
    ]
    missing = [w for w in want if w not in out.splitlines()]
    assert not missing and not any(n in out for n in ("unit.passes", "unit.no_program", "unit.fixture_gone")), \
        (missing, out)
    bad = subprocess.run([sys.executable, script, os.path.join(sys.argv[1], "README.md")], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1, (bad.returncode, bad.stderr)
    print("PASS: every skipped test with its reason")


if __name__ == "__main__":
    main()
