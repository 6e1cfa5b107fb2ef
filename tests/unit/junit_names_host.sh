#!/usr/bin/env bash
# The JUnit report of a ctest run (ci/test.sh writes one: --output-junit)
# names the host and the build (root CMakeLists.txt: include(CTest)), so the
# reports of a fleet's runners stay apart (docs/baselines.md, A fleet).
# Runs one quick test of the build from a scratch folder, with the build's
# DartConfiguration.tcl: ctest rewrites the logs of the folder it runs in.
#   junit_names_host.sh BUILD_DIR
set -uo pipefail
build=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -f "$build/DartConfiguration.tcl" ] || { echo "FAIL: no DartConfiguration.tcl in $build: include(CTest) is gone"; exit 1; }
cp "$build/DartConfiguration.tcl" "$work/"
echo "subdirs([==[$build]==])" > "$work/CTestTestfile.cmake"
(cd "$work" && ctest -R '^unit\.cli_version$' --output-junit "$work/report.xml" > "$work/ctest.log" 2>&1) ||
  { echo "FAIL: ctest: $(tail -3 "$work/ctest.log")"; exit 1; }
python3 - "$work/report.xml" "$(uname -n)" <<'PY'
import sys
import xml.etree.ElementTree as ET
suite, host = ET.parse(sys.argv[1]).getroot(), sys.argv[2]
cases = suite.findall("testcase")
bad = []
if suite.get("hostname") != host:
    bad.append(f"hostname '{suite.get('hostname')}', not this host's '{host}'")
if not (suite.get("name") or "").startswith("lstmcheck-"):
    bad.append(f"the suite is named '{suite.get('name')}', not the build (lstmcheck-...)")
if [c.get("name") for c in cases] != ["unit.cli_version"] or cases[0].get("status") != "run":
    bad.append(f"testcases {[(c.get('name'), c.get('status')) for c in cases]}, not unit.cli_version run")
for b in bad:
    print("FAIL " + b)
if not bad:
    print(f"PASS: the JUnit report names host '{host}' and build '{suite.get('name')}'")
sys.exit(1 if bad else 0)
PY
