#!/usr/bin/env bash
# test/cassert/run-cassert.sh: `make test-cassert`.
#
# Builds PostgreSQL 15 with --enable-cassert --enable-debug from the Debian
# source package (upstream source; Debian's patches are not applied, see
# README.md) into a cache directory, once, then runs test/run-tests.sh
# against that installation: the extension is built with its pg_config
# (so USE_ASSERT_CHECKING is on in gbtree too) and installed into it, and
# the regress, isolation and TAP suites run on assertion-enabled servers.
#
# Environment:
#   GBTREE_CASSERT_CACHE=dir  cache directory (default: as root
#                             /var/cache/gbtree-pg15-cassert, otherwise
#                             $HOME/.cache/gbtree-pg15-cassert)
#   CASSERT_SUITES=list       harness suites (default
#                             regress,isolation,tap,gpuemu,pgsuite; pgsuite is
#                             PostgreSQL's own regression suite rewritten to
#                             gbtree, test/pgsuite/README.md, and uses the
#                             cached source)
#   CASSERT_REBUILD=1         rebuild even when the cache holds a build
#   CASSERT_BUILD_ONLY=1      make sure the cache holds a build; run no tests
#   CASSERT_PG_VERSION=v      Debian source version to build, e.g.
#                             15.18-0+deb12u1 (default: the newest one
#                             apt-get source can download); a cached build
#                             of another version is then rebuilt
#   CASSERT_JOBS=n            make -j for PostgreSQL (default: nproc)
#   CASSERT_CFLAGS=flags      CFLAGS for configure (default: configure's,
#                             -O2 plus -g from --enable-debug)
#   GBTREE_PG_SRC=path        build from this instead of apt-get source: an
#                             extracted postgresql-15 source tree (copied;
#                             Debian patches recorded in .pc/ are reverted
#                             in the copy) or a .dsc file
#   CASSERT_CORES=1           as root: let the test user's servers dump core
#                             (a limits.d entry for the test user while the
#                             tests run: runuser's pam_limits would reset the
#                             core size limit to init's, 0); cores get a gdb
#                             backtrace.  Without it, assertion failures
#                             still get the backtrace PostgreSQL logs
#   KEEP_TMP=1                keep the harness's scratch directory
#   TOTAL_TIMEOUT=seconds     the harness's budget (default: 5100 minus the
#                             time spent building, at least 900)
#
# Output: the timing of each phase, then the harness's summary; the last
# line is "N passed, N failed" and the exit status is the harness's (a
# failed build counts as one failed test, exit status 1).

set -u
set -o pipefail
exec 2>&1
unset MAKEFLAGS MFLAGS MAKELEVEL
export LANG=C.UTF-8
unset LC_ALL

GB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
case ":$PATH:" in *:/usr/sbin:*) ;; *) PATH=$PATH:/usr/sbin:/sbin ;; esac

# Bump when the build procedure changes, so that cached builds are redone.
RECIPE=1
PG_MAJOR=15
SRC_PACKAGE=postgresql-$PG_MAJOR
IS_ROOT=0
[ "$(id -u)" -eq 0 ] && IS_ROOT=1

if [ -n "${GBTREE_CASSERT_CACHE:-}" ]; then
    CACHE=$GBTREE_CASSERT_CACHE
elif [ "$IS_ROOT" = 1 ]; then
    # not under /root: the unprivileged test user must read the install
    CACHE=/var/cache/gbtree-pg15-cassert
else
    CACHE=${HOME:?}/.cache/gbtree-pg15-cassert
fi
case $CACHE in /*) ;; *) CACHE=$PWD/$CACHE ;; esac
PREFIX=$CACHE/install
SRC_DIR=$CACHE/src
DL_DIR=$CACHE/dl
LOG_DIR=$CACHE/logs
STAMP=$CACHE/stamp
CORE_LIMITS=/etc/security/limits.d/90-gbtree-cassert-core.conf
CORES_SET=0
SUITES=${CASSERT_SUITES:-regress,isolation,tap,gpuemu,pgsuite}
JOBS=${CASSERT_JOBS:-$(nproc 2>/dev/null || echo 2)}
CFLAGS_WANTED=${CASSERT_CFLAGS:-}
CONFIGURE_FLAGS=(
    "--prefix=$PREFIX"
    --enable-cassert
    --enable-debug
    --enable-tap-tests
    --without-icu
    --without-llvm
)
BUILD_PACKAGES="build-essential bison flex libreadline-dev zlib1g-dev
libipc-run-perl perl dpkg-dev patch bzip2 xz-utils"

say() { printf '%s\n' "$*"; }
section() { printf '\n==================== %s ====================\n' "$*"; }

# ---- phase timing ---------------------------------------------------------
TIMINGS=()
PHASE=""
PHASE_T0=0
phase() {  # phase NAME: end the current phase (if any), start NAME
    phase_end
    PHASE=$1
    PHASE_T0=$SECONDS
    section "cassert: $PHASE"
}
phase_end() {
    [ -n "$PHASE" ] || return 0
    TIMINGS+=("$(printf '%-12s %5ds  (%dm%02ds)' "$PHASE" $((SECONDS - PHASE_T0)) \
        $(((SECONDS - PHASE_T0) / 60)) $(((SECONDS - PHASE_T0) % 60)))")
    PHASE=""
}
print_timings() {
    local l
    section "cassert: timings"
    for l in "${TIMINGS[@]+"${TIMINGS[@]}"}"; do say "$l"; done
    say "$(printf '%-12s %5ds  (%dm%02ds)' total "$SECONDS" $((SECONDS / 60)) $((SECONDS % 60)))"
}

# A failure before the harness ran: report it in the harness's terms.
fail() {
    say "ERROR: $*"
    phase_end
    print_timings
    section "summary"
    say "failed:"
    say "  cassert/setup ($*)"
    say "0 passed, 1 failed"
    exit 1
}

# run_logged NAME CMD...: run CMD with its output in $LOG_DIR/NAME.log;
# on failure show the log's tail.
run_logged() {
    local name=$1 log=$LOG_DIR/$1.log rc; shift
    say "+ $* (output: $log)"
    "$@" >"$log" 2>&1
    rc=$?
    if [ "$rc" -ne 0 ]; then
        say "---- $name failed (exit status $rc); last 60 lines of $log ----"
        tail -n 60 "$log"
        say "---- end of $log ----"
    fi
    return "$rc"
}

# ---- packages ---------------------------------------------------------------
pkg_installed() {
    [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}
ensure_build_packages() {
    local missing="" p
    command -v dpkg-query >/dev/null 2>&1 || { say "not a Debian system: not checking packages"; return 0; }
    for p in $BUILD_PACKAGES; do
        pkg_installed "$p" || missing="$missing $p"
    done
    [ -z "$missing" ] && { say "build packages present"; return 0; }
    if [ "$IS_ROOT" != 1 ]; then
        say "WARNING: missing packages (not root, not installing):$missing"
        return 0
    fi
    say "Installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    # shellcheck disable=SC2086
    apt-get install -y --no-install-recommends $missing && return 0
    apt-get update || return 1
    # shellcheck disable=SC2086
    apt-get install -y --no-install-recommends $missing
}

# ---- deb-src ------------------------------------------------------------------
source_versions() {  # newest first
    apt-cache showsrc "$SRC_PACKAGE" 2>/dev/null |
        awk '/^Package:/ { p = $2 } /^Version:/ && p == "'"$SRC_PACKAGE"'" { print $2 }' |
        sort -u -V -r
}
have_deb_src() {
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] && grep -qE '^Types:.*(^|[[:space:]])deb-src([[:space:]]|$)' "$f" && return 0
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] && grep -qE '^[[:space:]]*deb-src[[:space:]]' "$f" && return 0
    done
    return 1
}
# Add deb-src entries mirroring the enabled deb entries for this release
# (same URIs, components, keys), in sources.list.d/gbtree-cassert-src.*.
add_deb_src() {
    local codename f out_s=/etc/apt/sources.list.d/gbtree-cassert-src.sources
    local out_l=/etc/apt/sources.list.d/gbtree-cassert-src.list
    # shellcheck disable=SC1091
    codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
    [ -n "$codename" ] || codename=bookworm
    : >"$out_s.tmp"; : >"$out_l.tmp"
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        # deb822 stanzas: keep those of Types deb, not disabled, with a suite
        # of this release; write them as deb-src with only those suites.
        awk -v cn="$codename" '
            function flush(   i, keep) {
                if (isdeb && enabled && suites != "" && nl > 0) {
                    if (nout++) print ""
                    print "Types: deb-src"
                    for (i = 1; i <= nl; i++) {
                        if (lines[i] ~ /^Suites:/) print "Suites:" suites
                        else print lines[i]
                    }
                }
                nl = 0; isdeb = 0; enabled = 1; suites = ""
            }
            BEGIN { enabled = 1 }
            /^[[:space:]]*$/ { flush(); next }
            /^#/ { next }
            /^Types:/ { n = split(substr($0, 7), t, /[[:space:]]+/)
                        for (i = 1; i <= n; i++) if (t[i] == "deb") isdeb = 1
                        next }
            /^Enabled:/ { if ($2 ~ /^(no|false|0)$/) enabled = 0 }
            /^Suites:/ { n = split(substr($0, 8), s, /[[:space:]]+/)
                         for (i = 1; i <= n; i++)
                             if (s[i] == cn || index(s[i], cn "-") == 1) suites = suites " " s[i] }
            { lines[++nl] = $0 }
            END { flush() }
        ' "$f" >>"$out_s.tmp"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        awk -v cn="$codename" '
            $1 == "deb" {
                i = 2; if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
                s = $(i + 1)
                if (s == cn || index(s, cn "-") == 1) { sub(/^[[:space:]]*deb/, "deb-src"); print }
            }' "$f" >>"$out_l.tmp"
    done
    [ -s "$out_s.tmp" ] && mv "$out_s.tmp" "$out_s" && say "added $out_s:" && cat "$out_s"
    [ -s "$out_l.tmp" ] && mv "$out_l.tmp" "$out_l" && say "added $out_l:" && cat "$out_l"
    rm -f "$out_s.tmp" "$out_l.tmp"
    [ -f "$out_s" ] || [ -f "$out_l" ]
}

# ---- source -------------------------------------------------------------------
SRC_VERSION=""
SRC_ORIGIN=""

# fetch_source_apt: download the newest (or CASSERT_PG_VERSION) source
# package that can be downloaded and extract it, unpatched, into $SRC_DIR.
fetch_source_apt() {
    local versions v dsc
    command -v apt-get >/dev/null 2>&1 || { say "apt-get not found"; return 1; }
    versions=$(source_versions)
    if [ -z "$versions" ]; then
        if ! have_deb_src; then
            [ "$IS_ROOT" = 1 ] || { say "no deb-src entries in the APT sources, and not root to add them"; return 1; }
            add_deb_src || { say "could not derive deb-src entries from the deb entries"; return 1; }
        fi
        apt-get update || say "WARNING: apt-get update failed (trying anyway)"
        versions=$(source_versions)
    fi
    [ -n "$versions" ] || { say "apt-cache showsrc $SRC_PACKAGE: no source versions"; return 1; }
    say "source versions known to APT (newest first): $(echo "$versions" | tr '\n' ' ')"
    if [ -n "${CASSERT_PG_VERSION:-}" ]; then
        versions=$CASSERT_PG_VERSION
    fi
    for v in $versions; do
        rm -rf "$DL_DIR"; mkdir -p "$DL_DIR"
        # let apt download as its sandbox user (avoids a warning as root)
        [ "$IS_ROOT" = 1 ] && id -u _apt >/dev/null 2>&1 && chown _apt "$DL_DIR"
        say "+ apt-get source --download-only $SRC_PACKAGE=$v"
        if ! (cd "$DL_DIR" && apt-get source --download-only "$SRC_PACKAGE=$v"); then
            say "version $v: source not downloadable, trying the next one"
            continue
        fi
        dsc=$(find "$DL_DIR" -maxdepth 1 -name '*.dsc' | head -n 1)
        [ -n "$dsc" ] || { say "version $v: no .dsc downloaded"; continue; }
        # Upstream source only: Debian's patches relocate pkglibdir into
        # /usr/lib/postgresql/15/lib (the system installation!) and move the
        # default socket directory; see README.md.
        if run_logged extract dpkg-source --skip-patches -x "$dsc" "$SRC_DIR"; then
            # dpkg-source leaves a copy of the tarballs beside the tree
            rm -f "$CACHE/${SRC_PACKAGE}_"*
            SRC_VERSION=$v
            SRC_ORIGIN="apt-get source $SRC_PACKAGE=$v (dpkg-source --skip-patches: upstream source)"
            rm -rf "$DL_DIR"
            return 0
        fi
        rm -rf "$SRC_DIR"
    done
    rm -rf "$DL_DIR"
    return 1
}

# fetch_source_local PATH: a .dsc, or an extracted source tree (copied;
# quilt-applied Debian patches reverted in the copy).
fetch_source_local() {
    local src=$1 p
    if [ -f "$src" ] && [ "${src%.dsc}" != "$src" ]; then
        run_logged extract dpkg-source --skip-patches -x "$src" "$SRC_DIR" || return 1
        rm -f "$CACHE/${SRC_PACKAGE}_"*
        SRC_ORIGIN="$src (dpkg-source --skip-patches: upstream source)"
    elif [ -d "$src" ] && [ -f "$src/configure" ]; then
        say "+ copying $src"
        mkdir -p "$SRC_DIR" && cp -a "$src/." "$SRC_DIR/" || return 1
        if [ -f "$SRC_DIR/.pc/applied-patches" ]; then
            say "reverting the Debian patches applied in the copy:"
            for p in $(tac "$SRC_DIR/.pc/applied-patches"); do
                say "  patch -R $p"
                (cd "$SRC_DIR" && patch -R -p1 -s -f --no-backup-if-mismatch \
                    <"debian/patches/$p") || { say "could not revert $p"; return 1; }
            done
            rm -rf "$SRC_DIR/.pc"
        fi
        if [ -f "$SRC_DIR/GNUmakefile" ]; then
            (cd "$SRC_DIR" && make -s distclean >/dev/null 2>&1)
        fi
        SRC_ORIGIN="copy of $src (upstream source)"
    else
        say "GBTREE_PG_SRC=$src is neither a .dsc nor a source tree"
        return 1
    fi
    if [ -f "$SRC_DIR/debian/changelog" ] && command -v dpkg-parsechangelog >/dev/null 2>&1; then
        SRC_VERSION=$(dpkg-parsechangelog -l "$SRC_DIR/debian/changelog" -S Version 2>/dev/null)
    fi
    [ -n "$SRC_VERSION" ] || SRC_VERSION=upstream-$(upstream_version)
    return 0
}

upstream_version() {
    sed -n "s/^PACKAGE_VERSION='\(.*\)'\$/\1/p" "$SRC_DIR/configure" 2>/dev/null
}

# ---- the cache --------------------------------------------------------------
stamp_key() {
    printf 'recipe=%s\nconfigure=%s\ncflags=%s\n' "$RECIPE" "${CONFIGURE_FLAGS[*]}" "$CFLAGS_WANTED"
}
PGXS_DIR=""
install_complete() {
    local f pkglib
    [ -x "$PREFIX/bin/pg_config" ] || return 1
    pkglib=$("$PREFIX/bin/pg_config" --pkglibdir 2>/dev/null) || return 1
    PGXS_DIR=$pkglib/pgxs
    for f in bin/postgres bin/initdb bin/pg_ctl bin/psql bin/pgbench bin/pg_waldump; do
        [ -x "$PREFIX/$f" ] || { say "missing: $PREFIX/$f"; return 1; }
    done
    for f in src/test/regress/pg_regress src/test/isolation/pg_isolation_regress \
             src/test/isolation/isolationtester; do
        [ -x "$PGXS_DIR/$f" ] || { say "missing: $PGXS_DIR/$f"; return 1; }
    done
    for f in Cluster Utils RecursiveCopy SimpleTee; do
        [ -f "$PGXS_DIR/src/test/perl/PostgreSQL/Test/$f.pm" ] ||
            { say "missing: $PGXS_DIR/src/test/perl/PostgreSQL/Test/$f.pm"; return 1; }
    done
    return 0
}
cache_usable() {
    [ -f "$STAMP" ] || { say "no build stamp in $CACHE"; return 1; }
    local differ
    differ=$(stamp_key | grep -vxF -f "$STAMP")
    if [ -n "$differ" ]; then
        say "cached build differs ($(echo "$differ" | tr '\n' ' ')): rebuilding"
        return 1
    fi
    if [ -n "${CASSERT_PG_VERSION:-}" ] && [ -z "${GBTREE_PG_SRC:-}" ] &&
        ! grep -qxF "source_version=$CASSERT_PG_VERSION" "$STAMP"; then
        say "cached build is not version $CASSERT_PG_VERSION: rebuilding"
        return 1
    fi
    install_complete || { say "cached installation is incomplete: rebuilding"; return 1; }
}

# The test user (as root: gbtree) reads the installation: every directory
# above it must be searchable by others.
check_traversable() {
    local d=$1
    while [ "$d" != / ] && [ -n "$d" ]; do
        case $(stat -c %A "$d" 2>/dev/null) in
            ?????????[xt]) ;;
            *) return 1 ;;
        esac
        d=$(dirname "$d")
    done
}

# ---- build ------------------------------------------------------------------
# Contrib modules the tests use (t13 compares pages with pageinspect).
# Also repairs a cached installation made before a module was needed: the
# source tree keeps its configuration, so one module builds on its own.
CONTRIB_MODULES="pageinspect"
install_contrib() {
    local m
    for m in $CONTRIB_MODULES; do
        [ -f "$("$PREFIX/bin/pg_config" --sharedir)/extension/$m.control" ] && continue
        (cd "$SRC_DIR" && run_logged "contrib-$m" make -C "contrib/$m" install) || return 1
    done
    chmod -R a+rX "$PREFIX"
    return 0
}

build_postgres() {
    local pgxs f cflags_arg=()
    [ -n "$CFLAGS_WANTED" ] && cflags_arg=("CFLAGS=$CFLAGS_WANTED")
    say "PostgreSQL $(upstream_version) ($SRC_VERSION) in $SRC_DIR"
    say "configure ${CONFIGURE_FLAGS[*]} ${cflags_arg[*]+"${cflags_arg[*]}"}"
    (cd "$SRC_DIR" && run_logged configure ./configure "${CONFIGURE_FLAGS[@]}" \
        ${cflags_arg[@]+"${cflags_arg[@]}"}) || return 1
    phase build
    (cd "$SRC_DIR" && run_logged build make -j"$JOBS") || return 1
    phase install
    (cd "$SRC_DIR" && run_logged install make install) || return 1
    # make install covers these in 15, but the harness needs them: be sure
    (cd "$SRC_DIR" && run_logged install-isolation make -C src/test/isolation install) || return 1
    (cd "$SRC_DIR" && run_logged install-regress make -C src/test/regress install) || return 1
    pgxs=$("$PREFIX/bin/pg_config" --pkglibdir)/pgxs
    if [ ! -f "$pgxs/src/test/perl/PostgreSQL/Test/Cluster.pm" ]; then
        say "TAP modules not installed by make install: copying src/test/perl"
        (cd "$SRC_DIR/src/test/perl" && find . -name '*.pm' -print0 |
            xargs -0 -I{} install -D -m 644 {} "$pgxs/src/test/perl/{}") || return 1
    fi
    install_contrib || return 1
    install_complete || return 1
    grep -q '^#define USE_ASSERT_CHECKING 1' "$("$PREFIX/bin/pg_config" --includedir-server)/pg_config.h" ||
        { say "pg_config.h lacks USE_ASSERT_CHECKING"; return 1; }
    chmod -R a+rX "$PREFIX" "$SRC_DIR"
    # Objects are not needed any more (the sources stay, for gdb).
    (cd "$SRC_DIR" && make -s clean >/dev/null 2>&1)
    return 0
}

write_stamp() {
    {
        echo "# gbtree cassert build: test/cassert/run-cassert.sh"
        echo "source_version=$SRC_VERSION"
        echo "source=$SRC_ORIGIN"
        echo "pg_version=$("$PREFIX/bin/pg_config" --version)"
        stamp_key
        echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "build_seconds=$1"
    } >"$STAMP.tmp" && mv "$STAMP.tmp" "$STAMP"
}

# trap_backtraces LOGFILE: each TRAP line of an assertion failure with the
# backtrace that ExceptionalCondition() prints after it (backtrace_symbols:
# "object(symbol+0xoff)[0xaddr]"), its frames of postgres and of shared
# objects resolved to function, file and line with addr2line.
trap_backtraces() {
    local line obj sym off bin base addr res
    awk '/TRAP:/ { print; t = 1; next }
         t && /\(.*\+0x[0-9a-f]+\) ?\[0x[0-9a-f]+\]$/ { print; next }
         { t = 0 }' "$1" |
    while IFS= read -r line; do
        case $line in *TRAP:*) say "$line"; continue ;; esac
        if ! [[ $line =~ ^(.*)\(([^()+]*)\+0x([0-9a-f]+)\)\ ?\[0x[0-9a-f]+\]$ ]] ||
            ! command -v addr2line >/dev/null 2>&1; then
            say "    $line"; continue
        fi
        obj=${BASH_REMATCH[1]} sym=${BASH_REMATCH[2]} off=${BASH_REMATCH[3]}
        case $obj in
            /*.so | /*.so.*) bin=$obj ;;
            *) bin=$PREFIX/bin/postgres ;;   # the process title stands for it
        esac
        base=0
        if [ -n "$sym" ]; then
            base=$(nm "$bin" 2>/dev/null | awk -v s="$sym" '$3 == s { print $1; exit }')
            [ -n "$base" ] || base=$(nm -D "$bin" 2>/dev/null | awk -v s="$sym" '$3 == s { print $1; exit }')
            [ -n "$base" ] || { say "    $line"; continue; }
            base=$((16#$base))
        fi
        # a return address: the call is the byte before it
        addr=$(printf '0x%x' $((base + 16#$off - 1)))
        res=$(addr2line -f -i -p -C -e "$bin" "$addr" 2>/dev/null | sed 's/ (inlined by) / <- /' | paste -sd ' ')
        say "    ${bin##*/}: ${res:-$line}"
    done
}

# report_crashes DIR: the server log lines of DIR's runs that tell of an
# assertion failure (TRAP) or a crash, and a backtrace of each core file.
report_crashes() {
    local dir=$1 traps c exe cores f
    traps=$(grep -rnE --include='*.log' 'TRAP:|terminated by signal (6|7|11)|PANIC:' "$dir" 2>/dev/null)
    if [ -n "$traps" ]; then
        say "server log lines (TRAP / signal 6, 7, 11 / PANIC):"
        printf '%s\n' "$traps" | sed "s|$dir/||" | head -n 60
        for f in $(printf '%s\n' "$traps" | grep 'TRAP:' | cut -d: -f1 | sort -u); do
            say "---- assertion failures in ${f#"$dir"/}, with resolved backtraces ----"
            trap_backtraces "$f" | head -n 200
        done
    else
        say "no TRAP, PANIC or crash (signal 6, 7, 11) in the server logs"
    fi
    mapfile -t cores < <(find "$dir" -type f \( -name core -o -name 'core.[0-9]*' \) 2>/dev/null)
    for c in "${cores[@]+"${cores[@]}"}"; do
        say "---- core file ${c#"$dir"/} ----"
        if ! command -v gdb >/dev/null 2>&1; then
            say "(gdb not installed: no backtrace)"
            continue
        fi
        # a backend's core names its process title, "postgres: user db ..."
        exe=$(gdb -batch -nx -c "$c" 2>/dev/null | sed -n "s/^Core was generated by \`\([^ ':]*\).*/\1/p")
        exe=$(basename "${exe:-postgres}")
        [ -x "$PREFIX/bin/$exe" ] || exe=postgres
        gdb -q -batch -nx -ex 'set pagination off' -ex 'bt 40' "$PREFIX/bin/$exe" "$c" 2>&1 |
            grep -vE '^$|^warning:|^\[|^Using host|^[0-9]+[[:space:]]' | tail -n 60
    done
    [ "${#cores[@]}" -eq 0 ] && say "no core files"
    return 0
}

# ============================================================================
# The whole run is one function, read in full before it starts: editing
# or checking out this file during a run cannot derail the run.
main() {
phase setup
say "cache: $CACHE"
mkdir -p "$CACHE" "$LOG_DIR" || fail "cannot create $CACHE"
if [ "$IS_ROOT" = 1 ]; then
    chmod 755 "$CACHE"
    check_traversable "$CACHE" ||
        fail "$CACHE is not reachable for the test user (a parent directory lacks o+x); set GBTREE_CASSERT_CACHE"
fi
exec 9>"$CACHE/.lock" || fail "cannot open $CACHE/.lock"
flock -w 7200 9 || fail "another run holds $CACHE/.lock"

BUILT_NOW=0
if [ "${CASSERT_REBUILD:-0}" != 1 ] && cache_usable; then
    say "reusing the cached build:"
    sed 's/^/  /' "$STAMP"
    install_contrib || fail "could not add the contrib modules $CONTRIB_MODULES to the cached build (logs in $LOG_DIR)"
else
    BUILD_T0=$SECONDS
    phase packages
    ensure_build_packages || fail "could not install the build packages"
    phase source
    rm -rf "$STAMP" "$PREFIX" "$SRC_DIR" "$DL_DIR"
    if [ -n "${GBTREE_PG_SRC:-}" ]; then
        fetch_source_local "$GBTREE_PG_SRC" || fail "could not prepare the source from GBTREE_PG_SRC=$GBTREE_PG_SRC"
    else
        fetch_source_apt || fail "could not get the $SRC_PACKAGE source package with apt-get source"
    fi
    case $(upstream_version) in
        "$PG_MAJOR".*) ;;
        *) fail "the source is PostgreSQL '$(upstream_version)', not $PG_MAJOR" ;;
    esac
    say "source: $SRC_ORIGIN"
    phase configure
    build_postgres || fail "building PostgreSQL failed (logs in $LOG_DIR)"
    write_stamp $((SECONDS - BUILD_T0))
    BUILT_NOW=1
    say "built and installed into $PREFIX; stamp:"
    sed 's/^/  /' "$STAMP"
fi
PG_CONFIG_CASSERT=$PREFIX/bin/pg_config
say "$("$PG_CONFIG_CASSERT" --version): $("$PG_CONFIG_CASSERT" --configure)"
# Others may run tests against the cache now, but nobody may rebuild it.
flock -s 9

if [ "${CASSERT_BUILD_ONLY:-0}" = 1 ]; then
    phase_end
    print_timings
    say "CASSERT_BUILD_ONLY=1: not running the tests"
    exit 0
fi

# ============================================================================
phase tests
if [ -z "${TOTAL_TIMEOUT:-}" ]; then
    TOTAL_TIMEOUT=$((5100 - SECONDS))
    [ "$TOTAL_TIMEOUT" -lt 900 ] && TOTAL_TIMEOUT=900
fi
if [ "${CASSERT_CORES:-0}" = 1 ] && [ "$IS_ROOT" = 1 ]; then
    printf '# test/cassert/run-cassert.sh (CASSERT_CORES=1), removed after the run\n%s soft core unlimited\n' \
        "${GB_TEST_USER:-gbtree}" >"$CORE_LIMITS" && say "enabled core dumps for ${GB_TEST_USER:-gbtree}: $CORE_LIMITS" &&
        CORES_SET=1 && trap 'rm -f "$CORE_LIMITS"' EXIT
fi
HARNESS_LOG=$(mktemp "${TMPDIR:-/tmp}/gbtree-cassert-log.XXXXXX") || fail "mktemp failed"
say "PG_CONFIG=$PG_CONFIG_CASSERT TESTS_ONLY=$SUITES TOTAL_TIMEOUT=$TOTAL_TIMEOUT test/run-tests.sh"
# Servers inherit the core size limit (core_pattern permitting, cores land
# in the data directories); the scratch directory is kept until the logs
# and cores have been looked at.
(
    ulimit -c unlimited 2>/dev/null || ulimit -c "$(ulimit -H -c)" 2>/dev/null
    PG_CONFIG=$PG_CONFIG_CASSERT TESTS_ONLY=$SUITES KEEP_TMP=1 TOTAL_TIMEOUT=$TOTAL_TIMEOUT \
        PGSUITE_PG_SRC=$SRC_DIR "$GB_ROOT/test/run-tests.sh"
) | tee "$HARNESS_LOG"
HARNESS_RC=${PIPESTATUS[0]}
[ "$CORES_SET" = 1 ] && rm -f "$CORE_LIMITS" && trap - EXIT
phase_end

SCRATCH=$(sed -n 's/^Scratch directory: \(.*\) (tests run as .*)$/\1/p' "$HARNESS_LOG" | tail -n 1)
section "cassert: assertion failures and crashes"
if [ -n "$SCRATCH" ] && [ -d "$SCRATCH" ]; then
    report_crashes "$SCRATCH"
    if [ "${KEEP_TMP:-0}" = 1 ]; then
        say "KEEP_TMP=1: scratch directory kept: $SCRATCH"
    else
        rm -rf "$SCRATCH"
    fi
else
    say "(no scratch directory to look at)"
fi

print_timings
[ "$BUILT_NOW" = 1 ] && say "(the PostgreSQL build was cached in $CACHE: next runs skip it)"

# The harness's summary, again, so that it ends the output.
if grep -q '^==================== summary ====================$' "$HARNESS_LOG"; then
    printf '\n'
    sed -n '/^==================== summary ====================$/,$p' "$HARNESS_LOG" |
        grep -v '^KEEP_TMP=1: scratch directory kept:'
else
    tail -n 1 "$HARNESS_LOG"
fi
rm -f "$HARNESS_LOG"
exit "$HARNESS_RC"
}

main "$@"   # exits with the harness's status
