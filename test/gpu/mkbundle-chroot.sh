#!/usr/bin/env bash
# test/gpu/mkbundle-chroot.sh MAJOR OUT.tar.gz: pack Debian's PostgreSQL
# MAJOR (17 or 18) from the chroot test/pg-chroot.sh made, for the GPU
# machine (Ubuntu 24.04, no registry).  The 15 bundle
# (../shared/gpu-host/mkbundle.sh) runs on the host's C library; Debian
# trixie's and sid's builds need a newer one (sid's postgres asks for
# GLIBC_2.43, Ubuntu 24.04 has 2.39).  So this bundle carries the suite's
# C library and dynamic loader too, and every executable is patched to use
# them from the fixed place test/gpu/pg-up-chroot.sh unpacks to
# (/opt/pgMAJORhost/pgMAJOR): interpreter and DT_RPATH (which, unlike
# RUNPATH, also serves the libraries the server dlopens, gbtree's CUDA
# library among them).  Nothing may set LD_LIBRARY_PATH to it: the host's
# own programs would then load the wrong C library.  Root only.
set -euo pipefail
major=${1:?major}
out=$(realpath -m "${2:?output tarball}")
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
ch=$(gb_chroot_dir "$major") || { echo "17 or 18" >&2; exit 1; }
[ -x "$ch/usr/lib/postgresql/$major/bin/postgres" ] ||
    { echo "no $ch with postgresql-$major: run make test PG=$major first" >&2; exit 1; }
command -v patchelf >/dev/null || apt-get install -y --no-install-recommends patchelf
dest=/opt/pg${major}host/pg$major
stage=$(mktemp -d)
root=$stage/pg$major
mkdir -p "$root/usr/lib/postgresql" "$root/usr/share/postgresql" "$root/usr/include" "$root/lib"
cp -a "$ch/usr/lib/postgresql/$major" "$root/usr/lib/postgresql/"
rm -rf "$root/usr/lib/postgresql/$major/lib/bitcode" "$root/usr/lib/postgresql/$major/lib/llvmjit"*
cp -a "$ch/usr/share/postgresql/$major" "$root/usr/share/postgresql/"
cp -a "$ch/usr/include/postgresql" "$root/usr/include/"
# not the gbtree the chroot's test runs installed: the GPU machine builds its own
rm -f "$root/usr/lib/postgresql/$major/lib/gbtree.so" "$root/usr/lib/postgresql/$major/lib/libgbtree_cuda.so" \
    "$root/usr/share/postgresql/$major/extension/gbtree"*

# ELF files: executables (bin/, pgxs test programs) and shared objects
mapfile -t elves < <(cd "$root" && find . -type f \( -perm -u+x -o -name '*.so' \) -exec sh -c 'head -c 4 "$1" | grep -q ELF && echo "$1"' _ {} \;)
# their libraries as the chroot resolves them, C library included
for f in "${elves[@]}"; do
    chroot "$ch" ldd "/${f#./}" 2>/dev/null | awk '$3 ~ /^\// { print $3 } $1 ~ /^\/.*ld-linux/ { print $1 }'
done | sort -u | while read -r lib; do
    cp -L "$ch$lib" "$root/lib/$(basename "$lib")"
done
cp -L "$ch/lib64/ld-linux-x86-64.so.2" "$root/lib/ld-linux-x86-64.so.2"
for f in "${elves[@]}"; do
    p=$root/${f#./}
    if readelf -l "$p" 2>/dev/null | grep -q 'Requesting program interpreter'; then
        patchelf --set-interpreter "$dest/lib/ld-linux-x86-64.so.2" "$p"
    fi
    patchelf --force-rpath --set-rpath "$dest/lib" "$p"
done
for l in "$root"/lib/*.so*; do
    case $(basename "$l") in ld-linux*) continue ;; esac
    patchelf --force-rpath --set-rpath "$dest/lib" "$l" 2>/dev/null || true
done
tar -C "$stage" -czf "$out" "pg$major"
rm -rf "$stage"
ls -la "$out"
