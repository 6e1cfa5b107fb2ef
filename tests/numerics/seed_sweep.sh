#!/bin/bash
# How often a correct runner misses the gate over many seeds: the sweep
# behind docs/tolerance.md's moved-reference table. Not a ctest test (it
# takes minutes); its figures are in that table.
#
#   tests/numerics/seed_sweep.sh LSTMCHECK RUNNER FIRST_SEED LAST_SEED "I H"...
#   tests/numerics/seed_sweep.sh build/lstmcheck cpu_layernorm 1 120 "3 4" "3 5" "4 4" "4 5"
#
# Each (I, H) runs at every T in {1, 3, 6}, B in {1, 3}, L in {1, 2}; six
# larger shapes come with them (the ragged one at the first (I, H)). One
# line per run, "<worst ratio> <flags>" (FAIL first when it failed;
# NOT-RUN and why when it skipped or errored), then a summary. Exit 0 when
# every run passed, 1 when one did not, 2 on bad usage.
set -u
usage() {
    echo "seed_sweep.sh: $1 (usage: seed_sweep.sh LSTMCHECK RUNNER FIRST_SEED LAST_SEED \"I H\"...)" >&2
    exit 2
}
[ $# -ge 5 ] || usage "too few arguments"
bin=$1 runner=$2 first=$3 last=$4
shift 4
[ -f "$bin" ] && [ -x "$bin" ] || usage "$bin is not an executable file"
[[ $runner =~ ^[A-Za-z0-9_]+$ ]] || usage "'$runner' is not a runner name"
"$bin" list --device cpu 2>/dev/null | awk '{print $1}' | grep -qx "$runner" ||
    "$bin" list --device cuda 2>/dev/null | awk '{print $1}' | grep -qx "$runner" ||
    usage "$bin lists no runner '$runner'"
[[ $first =~ ^[0-9]+$ && $last =~ ^[0-9]+$ ]] || usage "seeds must be whole numbers"
[ "$first" -le "$last" ] || usage "the first seed $first is after the last $last"
for ih in "$@"; do
    [[ $ih =~ ^[1-9][0-9]*\ [1-9][0-9]*$ ]] || usage "'$ih' is not \"I H\" (two positive whole numbers)"
done

shapes() {
    local ih
    for ih in "$@"; do
        set -- $ih
        for T in 1 3 6; do for B in 1 3; do for L in 1 2; do
            echo "--seqLength $T --miniBatch $B --inputSize $1 --hiddenSize $2 --numLayers $L"
        done; done; done
    done
}
larger() {
    set -- $1
    echo "--seqLength 6 --miniBatch 4 --inputSize 10 --hiddenSize 12 --numLayers 2"
    echo "--seqLength 64 --miniBatch 2 --inputSize 4 --hiddenSize 6 --numLayers 1"
    echo "--seqLength 20 --miniBatch 8 --inputSize 32 --hiddenSize 32 --numLayers 1"
    echo "--lengths 4,1,7 --seqLength 7 --miniBatch 3 --inputSize $1 --hiddenSize $2 --numLayers 2"
    echo "--seqLength 16 --miniBatch 4 --inputSize 8 --hiddenSize 16 --numLayers 3"
    echo "--seqLength 30 --miniBatch 4 --inputSize 40 --hiddenSize 48 --numLayers 2"
}
# one run: its flags are arguments, never text of a command line
one_run() {
    local out line r
    out=$("$SWEEP_BIN" check --rnns "$SWEEP_RUNNER" "$@" 2>&1)
    line=$(printf '%s\n' "$out" | grep -E '^(PASS|FAIL|SKIP|ERROR) ' | head -1)
    case "$line" in
    PASS*) r=${line##*ratio }; echo "${r%)} $*" ;;
    FAIL*) r=${line##*(ratio }; echo "FAIL ${r%%)*} $*" ;;
    *) echo "NOT-RUN $*: ${line:-$(printf '%s\n' "$out" | head -1)}" ;;
    esac
}
export -f one_run
export SWEEP_BIN=$bin SWEEP_RUNNER=$runner

out=$(mktemp)
trap 'rm -f "$out"' EXIT
{ shapes "$@"; larger "$1"; } | while read -r flags; do
    for seed in $(seq "$first" "$last"); do echo "$flags --seed $seed"; done
done | xargs -P 2 -L 1 bash -c 'one_run "$@"' _ | tee "$out"
runs=$(wc -l < "$out")
failed=$(grep -c '^FAIL' "$out")
errors=$(grep -c '^NOT-RUN' "$out")
worst=$(sed 's/^FAIL //' "$out" | grep -v '^NOT-RUN' | sort -g -r | head -1)
echo "seed_sweep: $runner: $runs runs, $failed failed, $errors skipped or errored; worst: ${worst:-none}"
[ "$failed" -eq 0 ] && [ "$errors" -eq 0 ]
