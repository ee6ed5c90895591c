# Sourced by tools/install.sh and tools/wheel_check.sh, so that both install with the same options.
# uv does not read pip's configuration: the wheel folders (find-links) and constraints that pip is given, in the
# environment (PIP_FIND_LINKS, PIP_CONSTRAINT) or in a pip.conf, are passed on to uv here. Where pip is pointed at a
# folder holding the CPU build of torch, uv then installs that build too, not PyPI's with several GB of CUDA packages.

# pip_setting PYTHON KEY: KEY's value in pip's configuration files, all of them merged as pip merges them (global, user,
# site; `pip config get` reads only the user's file), its [install] section over [global]; empty if none sets it.
pip_setting() {
  local listing
  listing=$("$1" -m pip config list 2>/dev/null || true)
  { sed -n "s/^global\.$2='\(.*\)'\$/\1/p" <<<"$listing"; sed -n "s/^install\.$2='\(.*\)'\$/\1/p" <<<"$listing"; } \
    | tail -n 1
}

# uv_options PYTHON: fills the array UV_OPTIONS, reading pip's configuration with PYTHON's pip.
uv_options() {
  local links constraint link c
  links=${PIP_FIND_LINKS:-$(pip_setting "$1" find-links)}
  constraint=${PIP_CONSTRAINT:-$(pip_setting "$1" constraint)}
  UV_OPTIONS=()
  for link in $links; do UV_OPTIONS+=(--find-links "$link"); done
  for c in $constraint; do [ -f "$c" ] && UV_OPTIONS+=(--constraint "$c"); done
  return 0
}
