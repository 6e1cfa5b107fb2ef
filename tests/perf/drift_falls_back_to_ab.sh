#!/usr/bin/env bash
# A baseline entry the machine's present state cannot be compared with
# (control drift beyond the verdict's guard) is not left INCONCLUSIVE when its
# commit can be rebuilt: compare falls back to an A/B against that commit.
# The drift is made, not waited for: this machine's entry is recorded into a
# scratch folder, its control times scaled by 1.6 (drift -37.5%) and its
# ratios with them; its commit is set to the newest reproducible commit of
# the committed baselines.
#   drift_falls_back_to_ab.sh LSTMCHECK BASELINES_DIR
# Exit 77 (skip), with the reason, when no committed baseline names a
# reproducible commit or the A/B cannot run here (a shallow clone, a commit
# that does not build): the fallback was then chosen but nothing compared.
# Registered with lstmcheck_git_test: outside a git checkout it is skipped.
set -euo pipefail
lstmcheck=$1 committed=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
shape=(--rnns cpu --seqLength 20 --numLayers 1 --inputSize 128 --hiddenSize 128 --miniBatch 16)
"$lstmcheck" baseline update "${shape[@]}" --baseline-dir "$dir" --allow-dirty --no-progress >/dev/null
commit=$(python3 - "$committed" "$dir" <<'PY'
import glob, json, os, sys
committed, scratch = sys.argv[1], sys.argv[2]
best = None
for f in glob.glob(os.path.join(committed, "cpu-*.json")):
    for e in json.load(open(f))["entries"]:
        if e.get("reproducible") and (best is None or e["date"] > best["date"]):
            best = e
if best is None:
    sys.exit(0)
(path,) = glob.glob(os.path.join(scratch, "*.json"))
doc = json.load(open(path))
for e in doc["entries"]:
    e["git_commit"], e["reproducible"] = best["git_commit"], True
    # control times x1.6, and the ratios runner/control with them: a file
    # whose ratios are not its times' quotients is refused (docs/baselines.md)
    for key, f in (("control", 1.6), ("forward_ratio", 1 / 1.6), ("backward_ratio", 1 / 1.6)):
        series = e[key]
        for k, v in series.items():
            if k == "samples":
                series[k] = [x * f for x in v]
            elif k != "n":
                series[k] = v * f
json.dump(doc, open(path, "w"), indent=1)
print(best["git_commit"])
PY
)
[ -n "$commit" ] || { echo "no reproducible commit in $committed: nothing to fall back to"; exit 77; }
set +e
out=$("$lstmcheck" baseline compare "${shape[@]}" --baseline-dir "$dir" --max-seconds 10 2>&1)
rc=$?
set -e
echo "$out"
echo "exit $rc"
grep -q "comparing A/B against the baseline's commit ${commit:0:12}" <<<"$out" || { echo "FAIL: no fallback note"; exit 1; }
# the A/B ran (a line naming the commit), or could not here (a skip naming why)
if grep -Eq "^SKIP cpu .*(cannot compare|shallow|not in)" <<<"$out"; then
  echo "SKIP: the fallback was chosen, but the A/B against ${commit:0:12} cannot run here (above)"
  exit 77
fi
grep -Eq "^A/B cpu .* against ${commit:0:12} \(A\), the commit of this machine's entry" <<<"$out" \
  || { echo "FAIL: neither an A/B against ${commit:0:12} nor a skip with its reason"; exit 1; }
case $rc in 0|3) ;; *) echo "FAIL: exit $rc (0: decided SAME/FASTER, 3: not decided here)"; exit 1 ;; esac
