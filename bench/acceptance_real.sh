#!/usr/bin/env bash
# Acceptance on real fields that are NOT in ../shared/data (NCL example data from Debian's
# libncarg-data, extracted by scripts/real_fields_not_in_shared.sh):
#  1. `factz cp` counts agree exactly with the independent exact extractor
#     (scripts/independent_cp.py, rational arithmetic);
#  2. modes block and speculative at REL 1e-1, 1e-2, 1e-3: zero violations and the
#     pointwise bound.
#   bench/acceptance_real.sh [FIELDS_DIR]     (default /tmp/factz_realfields)
set -euo pipefail
source "$(dirname "$0")/lib/fields.sh"
dir=${1:-/tmp/factz_realfields}
ls "$dir"/*_u_*.f32 >/dev/null 2>&1 || bash "$root/scripts/real_fields_not_in_shared.sh" "$dir" >/dev/null
fail=0
printf "%-22s %9s %6s %6s  %s\n" field dims cp indep "block then speculative at REL 1e-1 1e-2 1e-3: ratio/violations/max_err over eb"
for f in "$dir"/*_u_*.f32; do
  field_of "$f"
  ours=$("$factz" cp -2 "$nx" "$ny" -i "$u" -i "$v" --json)
  theirs=$(python3 "$root/scripts/independent_cp.py" "$nx" "$ny" "$u" "$v")
  line=$(python3 - "$ours" "$theirs" <<'PY'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
same = a["critical_points"] == b["critical_points"] and all(a["types"][k] == b["types"].get(k, 0) for k in a["types"])
print(a["critical_points"], b["critical_points"], "ok" if same else "MISMATCH")
PY
)
  read -r n_ours n_theirs agree <<<"$line"
  [ "$agree" = ok ] || fail=1
  rels=""
  for run in "block 1e-1" "block 1e-2" "block 1e-3" "speculative 1e-1" "speculative 1e-2" "speculative 1e-3"; do
    read -r mode rel <<<"$run"
    c=$("$factz" compress -2 "$nx" "$ny" -i "$u" -i "$v" -z "$work/s.fz" -M REL $rel --mode $mode --json)
    "$factz" decompress -z "$work/s.fz" -o "$work/u" -o "$work/v" 2>/dev/null
    r=$("$factz" verify -2 "$nx" "$ny" -i "$u" -i "$v" -d "$work/u" -d "$work/v" --json)
    out=$(python3 - "$c" "$r" <<'PY'
import json, sys
c, r = json.loads(sys.argv[1]), json.loads(sys.argv[2])
ok = r["violations"] == 0 and max(r["max_abs_error"]) <= c["eb_abs"]
print(f'{c["ratio"]:.2f}/{r["violations"]}/{max(r["max_abs_error"]) / c["eb_abs"] if c["eb_abs"] else 0:.2f}', "ok" if ok else "FAIL")
PY
)
    [ "${out##* }" = ok ] || fail=1
    rels="$rels ${out% *}"
  done
  printf "%-22s %9s %6s %6s %s %s\n" "$base" "$dims" "$n_ours" "$n_theirs" "$agree" "$rels"
done
[ "$fail" = 0 ] && echo "acceptance: all fields agree and keep every critical point" || { echo "acceptance: FAILED"; exit 1; }
