# Shared by scripts/run and scripts/test.

# The products scripts/run builds: every binary the README and the tutorials use. scripts/docs-test puts only these
# on the tutorials' PATH, so a walk that needs a binary scripts/run does not build fails the docs-test.
RUN_PRODUCTS=(crema barista)

# Installs libpq-dev, postgresql and pkg-config with apt when any is missing (as root, or with sudo).
ensure_system_packages() {
  local missing=()
  for pkg in libpq-dev postgresql pkg-config; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing ${missing[*]} with apt" >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
}
