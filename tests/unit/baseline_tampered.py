"""A baseline file whose stored ratios are not its stored times' quotients
(issue 19: the verdict decides on the ratios, so ratios of 1e308 made
`baseline compare` say FASTER while its own raw column said +19.9%) is
refused by every command that reads it: exit 2, one line on stderr naming
the file, the entry (runner and shape) and the first sample that disagrees,
nothing else on stdout than the JSON error under --json, the file untouched.
usage: baseline_tampered.py LSTMCHECK [--strings]
Skips (77) when this machine measures its tiny entry too noisily for a
baseline file to hold it (the only way to get a file with this machine's key).
--strings: a file whose runner is "r\nWRONG x" (it forged a row of `baseline
show`) or whose date holds an ESC: `baseline show` refuses it the same way,
and no control byte reaches stdout or stderr; on the valid file, show's
--rnns / shape flags / --shape-set pick its entries."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SHAPE = ["--rnns", "cpu", "--seqLength", "2", "--numLayers", "1", "--inputSize", "2", "--hiddenSize", "3",
         "--miniBatch", "1"]
TAG = "s2-l1-i2-h3-b1"


def run(exe, args):
    return subprocess.run([exe, "baseline"] + args, capture_output=True, text=True)


def measure(exe, folder):
    """This machine's file with one entry of SHAPE: its path."""
    for _ in range(3):
        p = run(exe, ["update"] + SHAPE + ["--nloops", "5", "--allow-dirty", "--no-progress", "--baseline-dir",
                                           folder])
        if p.returncode == 0:
            (path,) = [os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".json")]
            return path
        assert "is outside the noise range" in p.stderr, (p.returncode, p.stdout, p.stderr)
    print("SKIP: three updates of a tiny entry measured noise beyond what a baseline file holds")
    sys.exit(77)


def expect_refused(exe, args, message, path):
    before = open(path, "rb").read()
    p = run(exe, args)
    assert p.returncode == 2, (args, p.returncode, p.stdout, p.stderr)
    # one line: the message (update adds why the file is left as it is)
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("lstmcheck: " + message), (args, p.stderr, message)
    if args[0] != "update":
        assert p.stderr == "lstmcheck: " + message + "\n", (args, p.stderr, message)
    if "--json" in args:
        assert json.loads(p.stdout) == {"error": message, "status": "bad input"}, (args, p.stdout)
    else:
        assert p.stdout == "", (args, p.stdout)
    assert open(path, "rb").read() == before, (args, "the file was changed")


def show_filters(exe, folder):
    """show --rnns / shape flags / --shape-set pick entries (and are checked
    as every command checks them): the one entry of SHAPE, or none."""
    d = ["--baseline-dir", folder, "--json"]
    cases = [(SHAPE, 1), (["--rnns", "cpu"], 1), (["--rnns", "ref"], 0), (SHAPE[2:], 1),
             (SHAPE[:-1] + ["2"], 0), (["--device", "cpu", "--shape-set", "small"], 0)]
    for args, n in cases:
        p = run(exe, ["show"] + args + d)
        assert p.returncode == 0, (args, p.returncode, p.stdout, p.stderr)
        entries = json.loads(p.stdout)["entries"]
        assert len(entries) == n and all(e["runner"] == "cpu" for e in entries), (args, entries)


def this_machine(exe, folder):
    """Where `baseline show` looks for this machine's cpu file in an empty
    folder, and the machine fields it names (name=value, ...)."""
    p = run(exe, ["show", "--device", "cpu", "--baseline-dir", folder])
    m = re.search(r"no baseline for this machine \((.*)\) at (\S+\.json); make one with", p.stdout)
    assert p.returncode == 3 and m, (p.returncode, p.stdout, p.stderr)
    return m.group(2), dict(field.split("=", 1) for field in m.group(1).split(", "))


def entry(**strings):
    """A valid entry of SHAPE's sizes (control 1: every ratio is its time)."""
    times = {"n": 3, "samples": [1.0, 2.0, 3.0]}
    e = {"runner": "cpu", "shape": {"seqLength": 2, "numLayers": 1, "inputSize": 2, "hiddenSize": 3,
                                    "miniBatch": 1},
         "seed": 17, "lstmcheck_version": "0.1.0", "git_commit": "0" * 40, "reproducible": False,
         "date": "2026-01-01T00:00:00Z", "control_workload": "control", "rounds": 5,
         "noise": {"forward": 0.01, "backward": 0.01}, "forward": times, "backward": times,
         "control": {"n": 3, "samples": [1.0, 1.0, 1.0]}, "forward_ratio": times, "backward_ratio": times}
    e.update(strings)
    return e


def expect_no_control(args):
    """No control byte in what the command prints, but each line's end."""
    p = subprocess.run([args[0], "baseline"] + args[1:], capture_output=True)
    for name, out in (("stdout", p.stdout), ("stderr", p.stderr)):
        bad = [c for c in out.replace(b"\n", b"") if c < 0x20 or c == 0x7f]
        assert not bad, (args, name, out)


def planted_name(exe, doc):
    """A file whose name holds ESC, a newline and a C1 CSI, in a folder
    without this machine's file: compare's A/B skip names it, escaped (it
    forged a line of the output)."""
    other = tempfile.mkdtemp(prefix="lstmcheck_names_")
    try:
        doc = dict(doc, entries=[entry()])  # reproducible: false, so no A/B build: a skip naming the file
        with open(os.path.join(other.encode(), b"evil\x1b[31m\nFAKE ROW\xc2\x9b.json"), "w") as f:
            json.dump(doc, f)
        args = [exe, "compare"] + SHAPE + ["--baseline-dir", other]
        p = subprocess.run([exe, "baseline"] + args[1:], capture_output=True)
        assert p.returncode == 3 and b"evil\\x1b[31m\\nFAKE ROW\\u009b.json" in p.stdout, (p.returncode, p.stdout)
        expect_no_control(args)
    finally:
        shutil.rmtree(other)


def strings(exe):
    folder = tempfile.mkdtemp(prefix="lstmcheck_strings_")
    try:
        path, fields = this_machine(exe, folder)
        d = ["--baseline-dir", folder, "--device", "cpu"]
        doc = {"format": "lstmcheck-baseline", "version": 1, "machine": {"device": "cpu", "fields": fields},
               "entries": [entry()]}
        with open(path, "w") as f:
            json.dump(doc, f)
        p = run(exe, ["show"] + d)  # the valid file: shown
        assert p.returncode == 0 and "\ncpu " in p.stdout, (p.returncode, p.stdout, p.stderr)
        show_filters(exe, folder)
        planted_name(exe, doc)
        for report in ("--markdown", "--plot"):  # a report never overwrites the file compared against
            expect_refused(exe, ["compare", report, path] + SHAPE + d,
                           "'%s' is the baseline file compared against: a report there would overwrite it" % path,
                           path)
        cases = [({"runner": "r\nWRONG x"}, "entries[0].runner holds control character U+000A at byte 1"),
                 ({"date": "2026\x1b[2J"}, "entries[0].date holds control character U+001B at byte 4")]
        for strs, field in cases:
            doc["entries"] = [entry(**strs)]
            with open(path, "w") as f:
                json.dump(doc, f)  # escaped: the file holds no control byte itself
            message = "%s: %s (it would reach the terminal)" % (path, field)
            expect_refused(exe, ["show"] + d, message, path)
            expect_refused(exe, ["show", "--json"] + d, message, path)
            expect_no_control([exe, "show"] + d)
            expect_no_control([exe, "show", "--json"] + d)
    finally:
        shutil.rmtree(folder)
    print("PASS")


def main(exe):
    folder = tempfile.mkdtemp(prefix="lstmcheck_tampered_")
    try:
        path = measure(exe, folder)
        good = json.load(open(path))
        p = run(exe, ["show", "--baseline-dir", folder])
        assert p.returncode == 0, ("the valid file", p.returncode, p.stdout, p.stderr)
        e = good["entries"][0]
        cases = [("forward", 3, lambda r: 1e308), ("backward", 0, lambda r: r * 1.01)]
        for series, i, tamper in cases:
            doc = json.loads(json.dumps(good))
            ratios = doc["entries"][0][series + "_ratio"]["samples"]
            ratios[i] = tamper(ratios[i])
            with open(path, "w") as f:
                json.dump(doc, f, indent=2)  # repr: every other number reads back the same
            quotient = e[series]["samples"][i] / e["control"]["samples"][i]
            message = ("%s: entries[0] (runner cpu, shape %s): %s_ratio[%d] is %r but %s/control is %r: "
                       "a stored ratio must be its times' quotient" % (path, TAG, series, i, ratios[i], series,
                                                                       quotient))
            d = ["--baseline-dir", folder]
            expect_refused(exe, ["show"] + d, message, path)
            expect_refused(exe, ["show", "--json"] + d, message, path)
            expect_refused(exe, ["compare"] + SHAPE + d, message, path)
            expect_refused(exe, ["compare", "--json"] + SHAPE + d, message, path)
            expect_refused(exe, ["update"] + SHAPE + ["--allow-dirty", "--no-progress"] + d, message, path)
    finally:
        shutil.rmtree(folder)
    print("PASS")


if __name__ == "__main__":
    (strings if sys.argv[2:] == ["--strings"] else main)(sys.argv[1])
