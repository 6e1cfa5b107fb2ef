"""A plugin that prints on stdout (while loading, in create, forward and
backward, and at exit: an atexit handler, its destructor) leaves lstmcheck's
JSON on stdout whole: every child process writes its stdout to stderr,
lstmcheck's own process moves fd 1 to stderr around each call into the
plugin, and for good once its own output is done. What the plugin printed
still reaches stderr.
usage: json_with_prints.py LSTMCHECK PRINTS_PLUGIN WORK_DIR DOCUMENT
DOCUMENT: bench_oss, bench_pep, bench_full, baseline_show, baseline_compare"""
import json
import os
import shutil
import subprocess
import sys

SHAPE = ["--device", "cpu", "--seqLength", "4", "--hiddenSize", "8", "--inputSize", "5", "--miniBatch", "2"]
PRINTED = "prints: a line on stdout from "


def run(exe, args, codes=(0,)):
    p = subprocess.run([exe] + args, capture_output=True, text=True)
    assert p.returncode in codes, "%s exited %d\nstdout: %s\nstderr: %s" % (args, p.returncode, p.stdout, p.stderr)
    return p


def parse(name, out):
    """the document on stdout: one JSON value, or pep's Caffe2Observer lines"""
    assert PRINTED not in out, "%s: the plugin's print is in the document:\n%s" % (name, out)
    if name == "bench_pep":
        lines = out.splitlines()
        assert lines, "no pep lines"
        for line in lines:
            prefix, _, doc = line.partition(" ")
            assert prefix == "Caffe2Observer", line
            json.loads(doc)
        return
    json.loads(out)


UPDATE_TRIES = 3
SKIP = 77  # ctest: SKIP_RETURN_CODE


def recorded(exe, plugin, work):
    """a baseline entry of prints:lstm in work, for show and compare (exit 3:
    the host too noisy for a baseline now, tried again; UPDATE_TRIES of them
    skip)"""
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    for _ in range(UPDATE_TRIES):
        p = run(exe, ["baseline", "update", "--plugin", plugin, "--baseline-dir", work, "--allow-dirty", "--nloops",
                      "20", "--no-progress"] + SHAPE, codes=(0, 3))
        if p.returncode == 0:
            return
    # the host's state, not the plugin's: a skip with its reason (exit 77), never a failure
    print("SKIP: no baseline recorded here now: %d updates refused for the host's noise; the last said: %s"
          % (UPDATE_TRIES, p.stderr.strip().splitlines()[-1]))
    sys.exit(SKIP)


def main(exe, plugin, work, document):
    if document.startswith("bench_"):
        fmt = document[len("bench_"):]
        p = run(exe, ["bench", "--plugin", plugin, "--nloops", "3", "--warmup", "1", "--print-json", fmt] + SHAPE)
        whence = ["its initialization", "create", "forward", "backward"]
    elif document == "baseline_show":
        recorded(exe, plugin, work)
        p = run(exe, ["baseline", "show", "--json", "--plugin", plugin, "--baseline-dir", work, "--device", "cpu"])
        whence = ["its initialization"]
    else:
        recorded(exe, plugin, work)
        # SAME, FASTER, SLOWER or INCONCLUSIVE: all possible on a busy machine
        p = run(exe, ["baseline", "compare", "--json", "--plugin", plugin, "--baseline-dir", work,
                      "--max-seconds", "5"] + SHAPE, codes=(0, 1, 3))
        whence = ["its initialization", "create", "forward", "backward"]
    parse(document, p.stdout)
    whence += ["its atexit handler", "its destructor"]
    for w in whence:
        assert PRINTED + w in p.stderr, "what the plugin printed in %s did not reach stderr:\n%s" % (w, p.stderr)
    print("PASS: %s is JSON on stdout; the plugin's prints went to stderr" % document)


if __name__ == "__main__":
    main(*sys.argv[1:5])
