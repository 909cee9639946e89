# Shared by scripts/run, scripts/test, scripts/citus-test and drills/citus-failover-drill.sh.

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

# require_citus NAME: exits 2, saying how to install Citus from Citus's own packages, when the Citus extension for this
# PostgreSQL is not installed (NAME is the script that needs it). Nothing of Citus is part of this repository.
require_citus() {
  local libdir
  libdir=$(pg_config --pkglibdir)
  if [ ! -f "$libdir/citus.so" ] || [ ! -f "$(pg_config --sharedir)/extension/citus.control" ]; then
    cat >&2 <<EOF
$1 needs the Citus extension for PostgreSQL 15, and it is not installed ($libdir/citus.so is missing).
Install Citus 13 from Citus's own packages, then run this script again (on Debian or Ubuntu):
  curl -s https://packagecloud.io/install/repositories/citusdata/community/script.deb.sh | sudo bash
  sudo apt-get install -y postgresql-15-citus-13.0    # or the newest postgresql-15-citus-13.x that apt-cache search lists
Other systems: https://docs.citusdata.com (Installation). scripts/test does not need Citus.
EOF
    exit 2
  fi
}
