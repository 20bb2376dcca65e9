#!/usr/bin/env bash
# Installs the real systems charly's tests drive (DESIGN.md "Runtimes"; the verified recipes
# are in RUNTIMES.md of the design notes): Debian packages, idempotently. Called by
# scripts/test before any test runs, so CI gets them on a fresh machine.
#
# Each family adds the packages it needs to PACKAGES (one line per family, with what for), and
# anything that is not a plain `apt-get install` as a function below, called at the end.
#
# Usage: scripts/runtimes.sh          (as root; a no-op when everything is installed)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
state="${CHARLY_RUNTIMES:-$root/.runtimes}"   # private apt configs, extracted .debs (gitignored)
mkdir -p "$state"

PACKAGES=(
  groff-base man-db   # shell: `charly man` renders with `man -l` (tests/terminal.rs)
  # host state (issue 13): gpg 2.2 for secrets.gpg.*; a private D-Bus session bus with
  # gnome-keyring-daemon as the Secret Service provider of the keyring backend; keepassxc-cli
  # as the second, independent reader of the KDBX files charly writes; keyctl to look at the
  # kernel keyring cache; secret-tool to read the keyring independently; hyperfine for the
  # settings.get / secrets.get process benchmark; podman for alias.*'s image lookups (images
  # imported into a storage under the test directory, nothing is run)
  gnupg dbus gnome-keyring libsecret-tools keepassxc keyutils hyperfine podman
  # deploy (start/stop/status/...; tests/deploy): podman 4.3 with runc (crun refuses these
  # hybrid cgroups), its networking and storage helpers, catatonit for pods, and the
  # busybox-static whose rootfs becomes the local base image (no registry is reachable)
  podman runc conmon slirp4netns uidmap fuse-overlayfs containernetworking-plugins iptables catatonit busybox-static
  gocryptfs fuse3   # config mount/unmount/passwd: encrypted volumes (tests/deploy/config.rs; FUSE works as root here)
  mmdebstrap   # the Debian base image with supervisor (service.*, tests/deploy/service.rs), from the machine's own apt sources
  strace   # tests/deploy: each stderr line of `charly mcp serve` is one write() (lines written in pieces interleaved in supervisord's log)
  dnsmasq-base   # check verbs: `dns:` with `server:` asks a real DNS server on 127.0.0.1 (tests/check_cli/plans.rs)
  chromium   # check.cdp.* (tests/cdp): Debian's Chromium headless with --remote-debugging-port on loopback, pages served by the test
  # check.vnc.* (tests/vnc): Xvfb + x11vnc (None, VNC auth), TigerVNC's Xvnc (VeNCrypt, its vncpasswd), xsetroot
  # to paint the root window a known pattern, xdotool to read the pointer back, xev (x11-utils)
  # to read typed text back as an X client sees it
  xvfb x11vnc tigervnc-standalone-server tigervnc-tools x11-xserver-utils xdotool x11-utils
  openssl   # check.vnc: a server certificate made with `openssl req -x509`, pinned by --ca-file (tests/vnc/tls.rs)
  # Wayland desktops, tmux and recordings (check.wl.*, tmux.*, record.*) on this machine for the
  # target `.`: sway 1.7 headless (run under an unprivileged uid: it refuses root), foot as a
  # client window, the wlroots tools the leaves drive, XWayland + xdotool for X clients, AT-SPI
  # through python3-gi, asciinema and wf-recorder/ffmpeg for recordings
  sway foot grim wtype wl-clipboard wlr-randr xwayland tmux asciinema wf-recorder ffmpeg python3-gi gir1.2-atspi-2.0 at-spi2-core
  # vm.* (tests/vm): qemu-system-x86 comes from bookworm-backports below; libvirt's session
  # daemon for the libvirt backend, run as an unprivileged uid with nss_wrapper (that uid has no
  # passwd entry here), e2fsprogs' mkfs.ext4 -d for the root file system, ssh for vm ssh
  libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients libnss-wrapper e2fsprogs openssh-client
  fonts-dejavu-core   # check.wl.overlay (tests/wayland/overlay.rs): charly-overlay draws text with DejaVu Sans
  # libnss-wrapper (above) also for check.wl.atspi (tests/wayland/sway.rs): dbus-daemon as the desktop's uid 4243, which has no passwd entry
  nginx   # scale-out: replicas of `charly mcp serve` behind a real load balancer (tests/python/test_nginx.py); deploy/kube runs on the deploy line's podman
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "runtimes: apt-get install ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "runtimes: Debian packages up to date" >&2
fi

# private_apt DIR SUITE [system]: an APT configuration of its own in DIR (/etc/apt is not
# touched) whose sources are SUITE of the machine's Debian mirror (with `system`, the machine's own
# sources too, so that a package installed from SUITE gets its dependencies from them), its lists
# updated. Callers run `APT_CONFIG=DIR/apt.conf apt-get ...`. Used for bookworm-backports
# (udevadm, qemu) and trixie (quadlet).
private_apt() {
  local apt="$1" suite="$2" system="${3:-}" uri
  uri="$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)"
  [[ -n "$uri" ]] || uri="$(awk '/^deb / && !/security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)"
  if [[ -z "$uri" ]]; then
    echo "runtimes: no Debian mirror in /etc/apt to fetch $suite from" >&2
    return 1
  fi
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/none"
  {
    [[ -n "$system" && -f /etc/apt/sources.list ]] && grep -E '^deb ' /etc/apt/sources.list
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $suite main"
  } >"$apt/sources.list"
  local parts="$apt/none"
  [[ -n "$system" ]] && parts=/etc/apt/sources.list.d
  {
    echo "Dir::Etc::SourceList \"$apt/sources.list\";"
    echo "Dir::Etc::SourceParts \"$parts\";"
    echo "Dir::State::Lists \"$apt/lists\";"
    echo "Dir::Cache \"$apt/cache\";"
  } >"$apt/apt.conf"
  APT_CONFIG="$apt/apt.conf" apt-get update -qq
}

# udevadm 254 from bookworm-backports (bookworm's 252 has no `udevadm verify`): the .debs are
# downloaded with a private APT configuration (/etc/apt is not touched) and extracted under
# $state/udev; $state/udev/bin/udevadm runs that build. Tests verify every rules file charly
# writes with it (CHARLY_UDEVADM names another one).
udevadm_backports() {
  local dir="$state/udev"
  local apt="$dir/apt"
  if [[ -x "$dir/bin/udevadm" ]] && "$dir/bin/udevadm" --version 2>/dev/null | grep -qE '^(25[4-9]|2[6-9][0-9])'; then
    echo "runtimes: udevadm $("$dir/bin/udevadm" --version) (bookworm-backports) ready" >&2
    return
  fi
  rm -rf "${dir:?}"
  mkdir -p "$dir/debs" "$dir/root" "$dir/bin"
  echo "runtimes: udevadm from bookworm-backports into $dir" >&2
  private_apt "$apt" bookworm-backports
  (cd "$dir/debs" && APT_CONFIG="$apt/apt.conf" apt-get download -qq -t bookworm-backports udev libsystemd-shared)
  local deb
  for deb in "$dir"/debs/*.deb; do dpkg-deb -x "$deb" "$dir/root"; done
  {
    echo '#!/bin/sh'
    echo "LD_LIBRARY_PATH='$dir/root/usr/lib/x86_64-linux-gnu/systemd' exec '$dir/root/bin/udevadm' \"\$@\""
  } >"$dir/bin/udevadm"
  chmod 755 "$dir/bin/udevadm"
  echo "runtimes: udevadm $("$dir/bin/udevadm" --version) (bookworm-backports) ready" >&2
}
udevadm_backports
# podman 5's quadlet generator (bookworm's podman 4.3 has none): Debian trixie's podman .deb,
# downloaded with a private APT configuration (/etc/apt is not touched) and extracted, not
# installed, under $state/quadlet; tests run $state/quadlet/usr/libexec/podman/quadlet -dryrun
# on the units `config setup --run-mode quadlet` writes (CHARLY_QUADLET names another one).
# The binary needs only libc (checked: it runs on bookworm's glibc 2.36).
quadlet_trixie() {
  local dir="$state/quadlet"
  local apt="$dir/apt"
  local bin="$dir/usr/libexec/podman/quadlet"
  if [[ -x "$bin" ]] && "$bin" -version 2>/dev/null | grep -qE '^5\.'; then
    echo "runtimes: quadlet $("$bin" -version) (trixie) ready" >&2
    return
  fi
  rm -rf "${dir:?}"
  mkdir -p "$dir/debs"
  echo "runtimes: podman (trixie) into $dir for its quadlet generator" >&2
  private_apt "$apt" trixie
  (cd "$dir/debs" && APT_CONFIG="$apt/apt.conf" apt-get download -qq podman)
  dpkg-deb -x "$dir"/debs/podman_*.deb "$dir"
  rm -rf "$apt/lists" "$dir/debs"
  echo "runtimes: quadlet $("$bin" -version) (trixie) ready" >&2
}
quadlet_trixie
# qemu-system-x86 for vm.* (tests/vm): from bookworm-backports through a private APT
# configuration, installed (bookworm's own qemu-system-x86 conflicts with the backports
# qemu-utils these machines carry: "qemu-utils : Breaks: qemu-system-common (< 1:8.0+dfsg-5~)").
qemu_backports() {
  local apt="$state/qemu/apt"
  if qemu-system-x86_64 --version 2>/dev/null | grep -qE 'version (9|[1-9][0-9])\.'; then
    echo "runtimes: $(qemu-system-x86_64 --version | head -1) ready" >&2
    return
  fi
  echo "runtimes: qemu-system-x86 from bookworm-backports" >&2
  private_apt "$apt" bookworm-backports system
  DEBIAN_FRONTEND=noninteractive APT_CONFIG="$apt/apt.conf" \
    apt-get install -y -qq --no-install-recommends -t bookworm-backports qemu-system-x86 >/dev/null
  rm -rf "$apt/lists"
  echo "runtimes: $(qemu-system-x86_64 --version | head -1) ready" >&2
}
qemu_backports
# podman as root reads /etc/containers/containers.conf.d/*.conf after the packaged defaults:
# a drop-in of our own, rewritten only when its content differs. `runtime = "runc"`: crun
# 1.8 refuses hybrid cgroups; `default_ulimits = []`: podman's default nofile=1048576 and
# nproc=32768 fail with EPERM without CAP_SYS_RESOURCE (RUNTIMES.md §1).
podman_conf() {
  local dir=/etc/containers/containers.conf.d file=/etc/containers/containers.conf.d/50-charly.conf
  local want
  want='# Written by charly scripts/runtimes.sh (RUNTIMES.md §1); rewritten when it differs.
[containers]
default_ulimits = []

[engine]
runtime = "runc"
events_logger = "file"
'
  if [[ "$(cat "$file" 2>/dev/null)"$'\n' != "$want" ]]; then
    echo "runtimes: writing $file" >&2
    mkdir -p "$dir"
    printf '%s' "$want" >"$file.tmp" && mv "$file.tmp" "$file"
  fi
}

# A local base image is rebuilt only when it is missing or its recipe changed: the recipe is
# the image's label ai.opencharly.<key>. `image_current IMAGE KEY RECIPE` says whether it is
# current; `image_import IMAGE KEY RECIPE TAR` imports a rootfs tarball with that label.
image_current() {
  local have
  have="$(podman image inspect --format "{{index .Labels \"ai.opencharly.$2\"}}" "$1" 2>/dev/null || true)"
  if [[ "$have" == "$3" ]]; then
    echo "runtimes: $1 up to date ($3)" >&2
    return 0
  fi
  echo "runtimes: building $1 ($3)" >&2
  return 1
}
image_import() {
  podman import --quiet --change "LABEL ai.opencharly.$2=$3" --change 'CMD ["/bin/sh"]' "$4" "$1" >/dev/null
}

# The busybox base image for fast container tests: busybox-static's binary, its applets as
# symlinks, root in /etc/passwd. Imported (no registry is reachable); the recipe is
# busybox-static's version.
BUSYBOX_IMAGE=localhost/charly-busybox:latest
busybox_image() {
  local version work
  version="$(dpkg-query -W -f='${Version}' busybox-static)"
  image_current "$BUSYBOX_IMAGE" busybox "$version" && return
  work="$(mktemp -d)"
  mkdir -p "$work"/rootfs/{bin,etc,tmp,proc,sys,dev,root,www,var/log}
  cp /bin/busybox "$work/rootfs/bin/busybox"
  chroot "$work/rootfs" /bin/busybox --install -s /bin
  echo 'root:x:0:0:root:/root:/bin/sh' >"$work/rootfs/etc/passwd"
  echo 'root:x:0:' >"$work/rootfs/etc/group"
  echo '<h1>hello from busybox httpd</h1>' >"$work/rootfs/www/index.html"
  chmod 1777 "$work/rootfs/tmp"
  tar -C "$work/rootfs" -cf "$work/rootfs.tar" .
  image_import "$BUSYBOX_IMAGE" busybox "$version" "$work/rootfs.tar"
  rm -rf "$work"
}

# The Debian base image for tests that need packages (supervisor for service.*,
# tests/deploy/service.rs): a minbase bookworm rootfs made by mmdebstrap from the machine's
# own apt sources; the recipe is the suite, the packages and mmdebstrap's version. A cold
# build took 1 min 53 s on a loaded CI machine (16 s of CPU; the rest is downloading), the
# import a few seconds; a current image is kept.
DEBIAN_IMAGE=localhost/charly-debian:latest
DEBIAN_PACKAGES=supervisor
# The desktop box base for the probes' box-target tests (tests/desktop: check.cdp.*,
# check.vnc.*, check.dbus.* through a box's running container): Chromium, Xvfb, x11vnc and a
# session bus under supervisord; socat because Chromium binds its DevTools port to 127.0.0.1
# whatever --remote-debugging-address says (Chromium 156 in this image).
DESKTOP_IMAGE=localhost/charly-desktop:latest
DESKTOP_PACKAGES=supervisor,dbus,chromium,xvfb,x11vnc,socat,fonts-dejavu-core
# The Wayland box base (tests/wayland, tests/tmux, tests/record: check.wl.*, tmux.*, record.*
# through a box's running container): sway headless and foot under supervisord, the wlroots
# tools inside the target, tmux, asciinema and wf-recorder for recordings, AT-SPI.
WAYLAND_IMAGE=localhost/charly-wayland:latest
WAYLAND_PACKAGES=supervisor,dbus,sway,foot,grim,wtype,wl-clipboard,wlr-randr,xwayland,xdotool,x11-utils,tmux,asciinema,wf-recorder,python3-gi,gir1.2-atspi-2.0,at-spi2-core,fonts-dejavu-core,procps
# The VM base (tests/vm: vm.build, vm.start, vm.ssh, ...): a bookworm rootfs that boots as a
# VM by direct kernel boot: Debian's cloud kernel with its initramfs, systemd as init with udev
# and D-Bus (logind turns the ACPI power button of `vm stop` into a shutdown), dhcpcd for
# qemu's user network, openssh-server. 1 min 49 s cold here (mostly downloading), 304 MB.
VM_IMAGE=localhost/charly-vm-debian:latest
VM_PACKAGES=linux-image-cloud-amd64,systemd-sysv,udev,dbus,dhcpcd,openssh-server
debian_image() {
  local image="$1" name="$2" packages="$3" recipe work
  recipe="bookworm minbase $packages mmdebstrap-$(dpkg-query -W -f='${Version}' mmdebstrap)"
  image_current "$image" "$name" "$recipe" && return
  work="$(mktemp -d)"
  mmdebstrap --quiet --variant=minbase --include="$packages" bookworm "$work/rootfs.tar"
  image_import "$image" "$name" "$recipe" "$work/rootfs.tar"
  rm -rf "$work"
}

# Chromium's first start on a fresh machine reads the whole browser from a cold disk and fills
# the font cache: CI once saw two first starts take over 30 s each. One start here, bounded,
# takes that cost once, before any test waits for a DevTools port.
chromium_warm() {
  local profile
  profile="$(mktemp -d)"
  timeout 120 chromium --headless=new --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$profile" --dump-dom about:blank >/dev/null 2>&1 \
    || echo "runtimes: chromium did not start within 120 s (tests/cdp will say so)" >&2
  rm -rf "$profile"
}

podman_conf
busybox_image
debian_image "$DEBIAN_IMAGE" debian "$DEBIAN_PACKAGES"
debian_image "$DESKTOP_IMAGE" desktop "$DESKTOP_PACKAGES"
debian_image "$WAYLAND_IMAGE" wayland "$WAYLAND_PACKAGES"
debian_image "$VM_IMAGE" vm "$VM_PACKAGES"
chromium_warm

echo "runtimes: ready" >&2
