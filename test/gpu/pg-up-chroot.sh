#!/bin/bash
# Source this on the GPU machine: source test/gpu/pg-up-chroot.sh MAJOR [postgres -c options...]
# The counterpart of .gpuhost/pg-up.sh (PostgreSQL 15) for a bundle that
# test/gpu/mkbundle-chroot.sh made (.gpuhost/pgMAJOR.tar.gz): unpacks it to
# /opt/pgMAJORhost, starts a throwaway cluster on a Unix socket in /tmp as
# OS user pgrun, and exports PATH, PGHOST, PGPORT, PGUSER, PGDATABASE,
# PGDATA, opts and pg_restart as pg-up.sh does.  No LD_LIBRARY_PATH: the
# bundle's programs find their own C library through their interpreter and
# RPATH, and the host's programs must keep theirs.
gb_major=${1:?major}
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bundle=${GPUHOST_BUNDLE:-$here/.gpuhost/pg$gb_major.tar.gz}
root=/opt/pg${gb_major}host
chmod 755 / 2>/dev/null
if [ ! -x "$root/pg$gb_major/usr/lib/postgresql/$gb_major/bin/postgres" ]; then
    mkdir -p "$root" && tar -C "$root" -xzf "$bundle" && chmod -R a+rX "$root" ||
        { echo "could not unpack $bundle"; return 1 2>/dev/null || exit 1; }
fi
export PATH=$root/pg$gb_major/usr/lib/postgresql/$gb_major/bin:$PATH
export PGHOST=/tmp PGPORT=${PGPORT:-5432} PGUSER=pgrun PGDATABASE=postgres
id pgrun >/dev/null 2>&1 || useradd -m -s /bin/bash pgrun
export PGDATA=${PGDATA:-/tmp/pgrun-data}
opts="-k /tmp -p $PGPORT"
for o in "$@"; do opts="$opts -c $o"; done
if [ ! -f "$PGDATA/PG_VERSION" ]; then
    mkdir -p "$PGDATA" && chown pgrun "$PGDATA"
    su pgrun -c "env PATH=$PATH initdb -D $PGDATA -A trust -U pgrun >/tmp/pgrun-initdb.log 2>&1" ||
        { echo "initdb failed:"; cat /tmp/pgrun-initdb.log; return 1 2>/dev/null || exit 1; }
fi
pg_restart() {
    local verb=start
    su pgrun -c "env PATH=$PATH pg_ctl -D $PGDATA status" >/dev/null 2>&1 && verb=restart
    su pgrun -c "env PATH=$PATH pg_ctl -D $PGDATA -l /tmp/pgrun.log -w -o '$opts' $verb" >/dev/null ||
        { echo "server did not start:"; tail -20 /tmp/pgrun.log; return 1; }
}
pg_restart && echo "PostgreSQL $(pg_config --version | awk '{print $2}') up on $PGHOST:$PGPORT as $PGUSER; log: /tmp/pgrun.log"
