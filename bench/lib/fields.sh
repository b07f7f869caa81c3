# Sourced by the bench/*.sh scripts: the built factz (built on demand), a scratch folder
# removed on exit, and the parsing of field file names NAME_u_NXxNY.f32.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
factz=${FACTZ_BUILD_DIR:-$root/build}/factz
[ -x "$factz" ] || bash "$root/scripts/build.sh" >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# field_of U_FILE: sets u, v (the component files), base (the name), dims, nx and ny.
field_of() {
  u=$1
  v=${u/_u_/_v_}
  local name
  name=$(basename "$u" .f32)
  dims=${name##*_}; nx=${dims%x*}; ny=${dims#*x}; base=${name%_u_*}
}
