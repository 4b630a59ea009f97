# Debian packages on demand, for the scripts that install what they need
# (source it): `apt_install PKG...` runs `apt-get update` once per script,
# then installs quietly, as root or through sudo.
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_updated=0
apt_install() {
    if [ $apt_updated = 0 ]; then
        as_root apt-get update -qq
        apt_updated=1
    fi
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}
