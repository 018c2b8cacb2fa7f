#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# house.t - scripts/check-house holds the house rules of docs/architecture.md: it passes on
# this tree, and names each breach planted in a copy of it (a source file over 1 200 lines, a
# README over 400, a pointer outside the repository) and a commit subject over 72 characters.
. "$(dirname "$0")/../lib.sh"
plan 7

CHECK=$REPO/scripts/check-house
bounded "$CHECK" "$REPO"
is "$RC" 0 "the tree keeps the house rules (subjects, file sizes, README, no pointer outside)" || diag "$ERR"

copy() {
	rm -rf "$TEST_SCRATCH/t" && mkdir "$TEST_SCRATCH/t"
	cp -r "$REPO/src" "$REPO/docs" "$REPO/README.md" "$TEST_SCRATCH/t/"
}
copy
seq 1 1201 | sed 's|^|// |' >"$TEST_SCRATCH/t/src/util/big.c"
bounded "$CHECK" "$TEST_SCRATCH/t"
isnt "$RC" 0 "a source file of 1 201 lines fails the check"
like "$ERR" "src/util/big.c has 1201 lines \(at most 1200" "... naming the file and its size"

copy
seq 1 401 >>"$TEST_SCRATCH/t/README.md"
bounded "$CHECK" "$TEST_SCRATCH/t"
like "$RC $ERR" "^1 .*README.md has [0-9]+ lines \(at most 400" "a README over 400 lines fails, named"

copy
printf 'See ../shared/DESIGN.md.\n' >>"$TEST_SCRATCH/t/docs/api.md"
bounded "$CHECK" "$TEST_SCRATCH/t"
like "$RC $ERR" "^1 .*docs/api.md points outside the repository" "a document pointing outside the repository fails, named"

printf '%s\n\nbody\n' "$(printf 'x%.0s' $(seq 1 73))" >"$TEST_SCRATCH/msg"
bounded "$CHECK" --subject "$TEST_SCRATCH/msg"
like "$RC $ERR" "^1 .*subject of 73 characters \(at most 72" "as a commit-msg hook: a subject of 73 characters is refused"
printf '# a comment git adds\n%s\n\nbody\n' "$(printf 'x%.0s' $(seq 1 72))" >"$TEST_SCRATCH/msg"
bounded "$CHECK" --subject "$TEST_SCRATCH/msg"
is "$RC" 0 "... one of 72 is taken"
