"""baseline show|compare --json: stdout is one JSON document also when the
command stops early ({"error": ..., "status": ...}), the exit code is that
of the error, and stderr says it in one line.
usage: json_errors.py LSTMCHECK EMPTY_DIR [--git]
--git: the cases that need the source tree to be a git checkout (CMake runs
them through tests/unit/git_checkout.sh, which skips them outside one); without
it, the cases that hold in any tree."""
import json
import subprocess
import sys


def expect(exe, args, code, status, words):
    p = subprocess.run([exe] + args, capture_output=True, text=True)
    assert p.returncode == code, (args, p.returncode, p.stdout, p.stderr)
    doc = json.loads(p.stdout)  # the whole of stdout, or this raises
    assert list(doc) == ["error", "status"], (args, doc)
    assert doc["status"] == status and words in doc["error"], (args, doc)
    assert p.stderr.count("\n") == 1 and words in p.stderr, (args, p.stderr)


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
    built = subprocess.run([exe, "list"], capture_output=True, text=True).stdout
    if "CUDA in this build: no" in built:
        expect(exe, ["baseline", "show", "--json", "--device", "cuda"], 2, "bad input", "not built into")


def git_checkout(exe, empty):
    expect(exe, ["baseline", "compare", "--json", "--against", "no-such-revision-xyz", "--baseline-dir", empty]
           + TINY, 2, "bad input", "no-such-revision-xyz")


if __name__ == "__main__":
    (git_checkout if sys.argv[3:] == ["--git"] else any_tree)(sys.argv[1], sys.argv[2])
    print("PASS")
