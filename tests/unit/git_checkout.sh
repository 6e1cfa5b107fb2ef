#!/bin/sh
# Runs a test that needs the source tree to be a git checkout (a revision to
# resolve, a commit to rebuild), or skips it with the reason: exit 77 and one
# line on stdout, where the CTest log shows it. The GPU machine receives the
# tree without .git; CI machines always have one. Asked when the test runs,
# not when configuring: a tree can get its .git back in between. The same
# question lstmcheck asks (src/base/gitrev.c), so both agree on "checkout".
#   git_checkout.sh SOURCE_DIR COMMAND [ARGUMENT...]
src=$1
shift
if [ "$(git -C "$src" rev-parse --is-inside-work-tree 2>/dev/null)" != true ]; then
  echo "SKIP: $src is not a git checkout (no .git there, or no git): this test needs one"
  exit 77
fi
exec "$@"
