"""baseline show|compare --json and bench --print-json: stdout is one JSON
document also when the command stops early, parse errors included ({"error":
..., "status": ...}), the exit code is that of the error, and stderr says it
in one line with no control character (what it quotes is escaped).
usage: json_errors.py LSTMCHECK EMPTY_DIR [--git]
--git: the cases that need the source tree to be a git checkout (CMake runs
them through tests/unit/git_checkout.sh, which skips them outside one); without
it, the cases that hold in any tree."""
import json
import os
import subprocess
import sys


def expect(exe, args, code, status, words, env=None):
    p = subprocess.run([exe] + args, capture_output=True, text=True, env=env)
    assert p.returncode == code, (args, p.returncode, p.stdout, p.stderr)
    doc = json.loads(p.stdout)  # the whole of stdout, or this raises
    assert list(doc) == ["error", "status"], (args, doc)
    assert doc["status"] == status and words in doc["error"], (args, doc)
    assert p.stderr.count("\n") == 1 and words in p.stderr, (args, p.stderr)
    shown = p.stdout + p.stderr[:-1]
    assert not any(ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 for c in shown if c != "\n"), (args, shown)


TINY = ["--device", "cpu", "--rnns", "cpu", "--seqLength", "2", "--hiddenSize", "3", "--inputSize", "2",
        "--miniBatch", "1"]


def any_tree(exe, empty):
    expect(exe, ["baseline", "show", "--json", "--device", "cpu", "--baseline-dir", empty], 3, "unsupported",
           "no baseline for this machine")
    expect(exe, ["baseline", "compare", "--json", "--rnns", "nope", "--baseline-dir", empty], 2, "bad input",
           "unknown runner 'nope'")
    expect(exe, ["baseline", "compare", "--json", "--against", "11d6bf8-dirty"] + TINY, 2, "bad input",
           "uncommitted changes")
    expect(exe, ["baseline", "show", "--json", "--plugin", "/nonexistent/libx.so"], 2, "bad input",
           "/nonexistent/libx.so")
    expect(exe, ["baseline", "update", "--json", "--baseline-dir", empty] + TINY, 2, "bad input",
           "--json applies to")
    expect(exe, ["baseline", "show", "--json", "--ab"], 2, "bad input", "--ab applies to baseline compare only")
    parse_errors(exe, empty)
    built = subprocess.run([exe, "list"], capture_output=True, text=True).stdout
    if "CUDA in this build: no" in built:
        expect(exe, ["baseline", "show", "--json", "--device", "cuda"], 2, "bad input", "not built into")


def parse_errors(exe, empty):
    """What the command line refuses, told as JSON where JSON was asked for
    (also when --json comes after the mistake)."""
    expect(exe, ["baseline", "show", "--json", "--bogus"], 2, "bad input", "unknown flag '--bogus'")
    expect(exe, ["baseline", "show", "--bogus", "--json"], 2, "bad input", "unknown flag '--bogus'")
    expect(exe, ["baseline", "show", "--json", "--baseline-dir", "--no-progress"], 2, "bad input",
           "needs a value, not the flag '--no-progress'")
    expect(exe, ["baseline", "show", "--json", "--baseline-dir", ""], 2, "bad input", "empty value")
    expect(exe, ["baseline", "show", "--json", "--rnns", "bogus", "--baseline-dir", empty], 2, "bad input",
           "unknown runner 'bogus'")
    expect(exe, ["baseline", "show", "--json", "--device", "cpu", "--shape-set", "bogus", "--baseline-dir",
                 empty], 2, "bad input", "no shape set 'bogus'")
    expect(exe, ["baseline", "show", "--json", "--hiddenSize", "20000", "--numLayers", "1000000",
                 "--baseline-dir", empty], 2, "bad input", "of host memory; this machine has")
    expect(exe, ["baseline", "show", "--json", "--rnns", "cp\nu"], 2, "bad input", "'cp\\nu'")
    expect(exe, ["baseline", "show", "--json", "--baseline-dir", "\x1b[31mred"], 2, "bad input",
           "'\\x1b[31mred'")
    env = dict(os.environ, LSTMCHECK_BASELINE_DIR="b\x1b]0;title\x07\u009b")
    expect(exe, ["baseline", "show", "--json"], 2, "bad input", "'b\\x1b]0;title\\x07\\u009b' holds a control", env)
    expect(exe, ["baseline", "show", "--json", "--baseline-dir", "/tmp/" + "a" * 4080], 2, "bad input",
           "would be a path of")
    expect(exe, ["baseline", "compare", "--json", "--against", "HEAD~1" + "x" * 250] + TINY, 2, "bad input",
           "at most 200")
    expect(exe, ["baseline", "compare", "--json", "--markdown", empty + "/r", "--plot", empty + "/./r"] + TINY,
           2, "bad input", "name one place")
    expect(exe, ["bench", "--print-json", "--rnns", "bogus"], 2, "bad input", "unknown runner 'bogus'")
    expect(exe, ["bench", "--print-json", "pep", "--bogus"], 2, "bad input", "unknown flag '--bogus'")
    expect(exe, ["bench", "--time-budget", "1e3", "--print-json=full"], 2, "bad input", "got '1e3'")


def git_checkout(exe, empty):
    expect(exe, ["baseline", "compare", "--json", "--against", "no-such-revision-xyz", "--baseline-dir", empty]
           + TINY, 2, "bad input", "no-such-revision-xyz")


if __name__ == "__main__":
    (git_checkout if sys.argv[3:] == ["--git"] else any_tree)(sys.argv[1], sys.argv[2])
    print("PASS")
