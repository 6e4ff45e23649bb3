#!/usr/bin/env bash
# test/pg-chroot.sh MAJOR SCRIPT [ARGS...]: run one of the repository's
# scripts (test/run-tests.sh, test/bench/run-bench.sh) against Debian's own
# build of PostgreSQL MAJOR, where this machine's Debian does not have it.
# A benchmark's test/bench/results come back into the repository.
#
# Debian bookworm packages PostgreSQL 15 only.  Debian's 17 is in trixie and
# its 18 in sid; their binaries need a newer C library than bookworm's, so
# they run in a chroot of that suite (debootstrap, minbase), made once and
# kept under /var/cache (GB_CHROOT_CACHE) as the cassert build is.  The
# chroot gets a fresh copy of the repository; the script then runs inside it
# as on a Debian machine that has the version natively (it installs what it
# is missing, postgresql-MAJOR and postgresql-server-dev-MAJOR among them,
# from that suite).  Root only: debootstrap, mount and chroot need it.
#
# Environment passed through: TESTS_ONLY, TAP_ONLY, KEEP_TMP, SUITE_TIMEOUT,
# TOTAL_TIMEOUT, FUZZ_*, SOAK_SECONDS, BENCH_*.  GB_CHROOT_REFRESH=1 makes
# the chroot again from scratch.
set -u
major=${1:?major version}
script=${2:?script to run}
shift 2

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=test/lib.sh
. "$here/test/lib.sh"
suite=$(gb_chroot_suite "$major") || { echo "ERROR: no Debian suite known for PostgreSQL $major" >&2; exit 1; }
ch=$(gb_chroot_dir "$major")
[ "$(id -u)" -eq 0 ] || { echo "ERROR: PostgreSQL $major runs in a Debian $suite chroot, which needs root (CI runs as root)" >&2; exit 1; }
case ":$PATH:" in *:/usr/sbin:*) ;; *) PATH=$PATH:/usr/sbin:/sbin ;; esac

mirror=${GB_DEBIAN_MIRROR:-http://deb.debian.org/debian}

unmount_all() {
    local m
    # deepest first
    for m in $(awk -v r="$ch/" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r); do
        umount -l "$m" 2>/dev/null
    done
}

if [ "${GB_CHROOT_REFRESH:-0}" = 1 ] && [ -d "$ch" ]; then
    unmount_all
    rm -rf --one-file-system "$ch"
fi
if [ ! -f "$ch/.gbtree-ready" ]; then
    command -v debootstrap >/dev/null 2>&1 || {
        echo "Installing debootstrap"
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends debootstrap ||
            { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends debootstrap; } ||
            { echo "ERROR: could not install debootstrap" >&2; exit 1; }
    }
    unmount_all
    rm -rf --one-file-system "$ch"
    echo "Making a Debian $suite chroot for PostgreSQL $major in $ch (debootstrap, minbase)"
    debootstrap --variant=minbase "$suite" "$ch" "$mirror" > "$ch.debootstrap.log" 2>&1 || {
        echo "ERROR: debootstrap $suite failed; tail of $ch.debootstrap.log:" >&2
        tail -n 20 "$ch.debootstrap.log" >&2
        exit 1
    }
    # Packages must not create or start a cluster of their own.
    mkdir -p "$ch/etc/postgresql-common"
    echo "create_main_cluster = false" > "$ch/etc/postgresql-common/createcluster.conf"
    printf '#!/bin/sh\nexit 101\n' > "$ch/usr/sbin/policy-rc.d"
    chmod 755 "$ch/usr/sbin/policy-rc.d"
    touch "$ch/.gbtree-ready"
fi
# The mirror's Release files may be past their Valid-Until (a frozen
# snapshot of the suite); apt would then refuse every update.
echo 'Acquire::Check-Valid-Until "false";' > "$ch/etc/apt/apt.conf.d/99gbtree-no-expiry"

mount_all() {
    mountpoint -q "$ch/proc" || mount -t proc proc "$ch/proc" || return 1
    mountpoint -q "$ch/sys" || mount -t sysfs sysfs "$ch/sys" || return 1
    if ! mountpoint -q "$ch/dev"; then
        mount --rbind /dev "$ch/dev" && mount --make-rslave "$ch/dev" || return 1
    fi
    cp -L /etc/resolv.conf "$ch/etc/resolv.conf" 2>/dev/null
    return 0
}
trap unmount_all EXIT
mount_all || { echo "ERROR: could not mount /proc, /sys and /dev in $ch" >&2; exit 1; }

# A fresh copy of the repository (build outputs stay behind, as in
# gb_copy_tree).
rm -rf "$ch/build/gbtree"
mkdir -p "$ch/build/gbtree"
tar -C "$here" --exclude=./.git --exclude=./.snap --exclude=./.gpuhost \
    --exclude='*.o' --exclude='*.so' --exclude=./tmp_check --exclude=./results \
    -cf - . | tar -C "$ch/build/gbtree" -xf - || { echo "ERROR: could not copy the repository into $ch" >&2; exit 1; }

pass=(PG="$major" GB_IN_CHROOT="$suite" PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
      HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive)
while IFS='=' read -r name _; do
    case $name in
        TESTS_ONLY|TAP_ONLY|KEEP_TMP|SUITE_TIMEOUT|TOTAL_TIMEOUT|SOAK_SECONDS|FUZZ_*|GPU_EMU_SUITES|BENCH_*|GB_CUDA|CUDA|GIT_REV)
            pass+=("$name=${!name}") ;;
    esac
done < <(env)

echo "Running $script against PostgreSQL $major in the Debian $suite chroot $ch"
# Refresh the package lists once a day at most, so that a cached chroot
# still finds the current packages.
if [ -z "$(find "$ch/var/lib/apt/lists" -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null | head -n 1)" ]; then
    chroot "$ch" apt-get update -q > "$ch.apt-update.log" 2>&1 ||
        { echo "WARNING: apt-get update in the chroot failed (tail of $ch.apt-update.log):"; tail -n 5 "$ch.apt-update.log"; }
fi
chroot "$ch" /usr/bin/env -i "${pass[@]}" bash "/build/gbtree/$script" "$@"
rc=$?
# A benchmark's results come back into the repository.
if [ "$script" = test/bench/run-bench.sh ] && [ -d "$ch/build/gbtree/test/bench/results" ]; then
    cp -r "$ch/build/gbtree/test/bench/results/." "$here/test/bench/results/"
    echo "Copied the results back to $here/test/bench/results"
fi
exit $rc
