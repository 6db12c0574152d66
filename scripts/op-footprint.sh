#!/usr/bin/env bash
# The footprint of one op in the tree: every tracked file that names it, grouped by tier, with the
# number of lines that name it (a proxy for edit places). Adding an op like it touches these files,
# so the count is the "files to add an op" figure of docs/design.md ("Adding an op").
#   scripts/op-footprint.sh lrn      an op with its own parameters (kernel, schema table, IR attrs)
#   scripts/op-footprint.sh mish     an activation (one ActivationMode value)
# The pattern is matched case-insensitively as a whole word or a word part of an identifier
# (git grep -i -E); bench/results/ (measurements) is left out. A file where the pattern appears only
# in comments (after //, or on # / * lines) is listed apart as "comment only" and not counted: a new op does not have to
# edit it (the review of 2026-11-25 counted the same way: 25 files for LRN, 11 for MISH). The
# training add-on's files (backward kernels, kernels/training, tests/training) are listed as a tier
# of their own and not counted: an inference op does not need a backward. In docs, the lines of a
# generated block (from a "<!-- ... generated ..." line to its "<!-- end of" line, which
# JET_UPDATE_DOCS=1 ctest -R op_tables rewrites) are not edits either: a file named only there is
# listed as "generated only"; so are the conformance pass lists (tests/conformance/passing_*.txt,
# which jet_conformance_run rewrites under JET_UPDATE_DOCS=1: a file generated whole, named by the
# ONNX node tests that pass). docs/design.md is left out with bench/results/ and bench/NOTES.md
# (the log of measurements, this one's included): its "Adding an op" checklist names the ops it
# was measured on, and a new op does not edit it.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 1 ] || { echo "usage: scripts/op-footprint.sh PATTERN" >&2; exit 2; }
pat=$1
total=0 sites=0
declare -A tier_files
comment_only=() generated_only=()
while IFS= read -r f; do
  lines=$(git grep -i -h -E -e "$pat" -- "$f" || true)
  n=$(printf '%s\n' "$lines" | grep -c . || true)
  # the part of each line before a // comment, lines that are not # / * comments
  code=$(printf '%s\n' "$lines" | { grep -v -E '^\s*(#|\*|/\*)' || true; } | sed 's|//.*||' |
         { grep -i -c -E -e "$pat" || true; })
  case "$f" in
    tests/conformance/passing_*.txt) generated_only+=("$f"); continue ;;
    *.md)  # docs: every mention is content, except in a generated block
      code=$(awk -v pat="$pat" '
        /^<!-- end of/ { gen = 0; next }
        /^<!-- .*generated/ { gen = 1; next }
        !gen && tolower($0) ~ tolower(pat) { n++ }
        END { print n + 0 }' "$f")
      if [ "$code" -eq 0 ]; then generated_only+=("$f"); continue; fi ;;
  esac
  if [ "$code" -eq 0 ]; then comment_only+=("$f"); continue; fi
  case "$f" in
    kernels/training/*|tests/training/*|kernels/include/jet/dnn/training.h) t=training ;;
    kernels/*|tests/kernels/*|tests/reference/*) t=kernels ;;
    schema/*) t=schema ;;
    converter/*) t=converter ;;
    runtime/*) t=runtime ;;
    docs/*|*.md) t=docs ;;
    tests/*) t=tests ;;
    *) t=other ;;
  esac
  tier_files[$t]+="    $f ($code)"$'\n'
  [ "$t" = training ] && continue  # the backward kernels of the training add-on: optional
  total=$((total + 1)); sites=$((sites + code))
done < <(git grep -i -l -E -e "$pat" -- . ':!bench/results' ':!bench/NOTES.md' ':!docs/design.md')
for t in kernels schema converter runtime tests docs other training; do
  [ -n "${tier_files[$t]:-}" ] || continue
  c=$(printf '%s' "${tier_files[$t]}" | grep -c .)
  echo "  $t: $c files"
  printf '%s' "${tier_files[$t]}"
done
[ ${#comment_only[@]} -eq 0 ] || echo "  comment only (not counted): ${comment_only[*]}"
[ ${#generated_only[@]} -eq 0 ] || echo "  generated only (not counted): ${generated_only[*]}"
k=$(printf '%s' "${tier_files[kernels]:-}" | grep -c . || true)
echo "op-footprint '$pat': $total files ($k in the kernel tier, $((total - k)) outside it), $sites lines"
