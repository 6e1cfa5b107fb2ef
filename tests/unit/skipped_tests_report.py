"""ci/skipped_tests.py on a JUnit file made here: every skipped test is
listed under its own reason (the runner, shape or program name before it
taken off, so one cause is one group), a passed test is not, a summary's
"0 skipped" is no reason, and a test that printed nothing shows the CTest
property that made it a skip.
    skipped_tests_report.py SOURCE_DIR"""
import os
import subprocess
import sys
import tempfile

CASES = [  # name, status, output
    ("numerics.aten.basic", "notrun", "SKIP aten: no CUDA device: no driver\n"),
    ("numerics.cudnn.large", "notrun", "SKIP cudnn: no CUDA device: no driver\n"),
    ("perf.cudnn.default", "notrun", "lstmcheck: no CUDA device: no driver\n"),
    ("perf.cpu_dropout.small", "notrun",
     "runner shape\nSKIP cpu_dropout s20-l1-i128-h128-b16: side A unknown runner\n0 slower; 1 not compared here\n"),
    ("numerics.onednn.varlen", "notrun",
     "T=7 varlen: SKIP onednn: onednn takes no variable-length batches\nonednn/varlen: 0 passed, 0 skipped\n"),
    ("unit.silent", "notrun", ""),
    ("unit.passes", "run", "SKIP this line belongs to a test that ran\n"),
]


def junit(path):
    with open(path, "w") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="x" tests="%d">\n' % len(CASES))
        for name, status, out in CASES:
            skipped = '<skipped message="SKIP_RETURN_CODE=77"/>' if status == "notrun" else ""
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
        "== skipped: 6 tests, by reason:",
        "  no CUDA device: no driver [3]",
        "      numerics.aten.basic numerics.cudnn.large perf.cudnn.default",
        "  side A unknown runner [1]",
        "      perf.cpu_dropout.small",
        "  onednn takes no variable-length batches [1]",
        "  (the test said nothing) SKIP_RETURN_CODE=77 [1]",
        "      unit.silent",
    ]
    missing = [w for w in want if w not in out.splitlines()]
    assert not missing and "unit.passes" not in out, (missing, out)
    bad = subprocess.run([sys.executable, script, os.path.join(sys.argv[1], "README.md")], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1, (bad.returncode, bad.stderr)
    print("PASS: every skipped test with its reason")


if __name__ == "__main__":
    main()
