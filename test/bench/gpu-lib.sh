# test/bench/gpu-lib.sh: helpers of the GPU machine's SQL benchmarks
# (gpu-sql.sh, gpu-build.sh), sourced by them.
q() { psql -X -qAt -v ON_ERROR_STOP=1 "$@"; }
now() { date +%s.%N; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a - b }'; }
div() { awk -v a="$1" -v b="$2" -v d="${3:-1}" 'BEGIN { printf "%.*f", d, a / b }'; }

# load_rows TABLE ROWS KEYEXPR: INSERT (i, KEYEXPR of i) for i = 1..ROWS,
# split over one session per CPU
load_rows() {
    local jobs per lo hi j
    jobs=$(nproc)
    per=$(( ($2 + jobs - 1) / jobs ))
    for j in $(seq 0 $((jobs - 1))); do
        lo=$((j * per + 1)); hi=$(( (j + 1) * per )); [ "$hi" -gt "$2" ] && hi=$2
        q -c "INSERT INTO $1 SELECT i, $3 FROM generate_series($lo, $hi) i" &
    done
    wait
}

# count_table TABLE KEYTABLE ROWS: the table of the count measures, (id,
# k int8) with ROWS rows whose keys spread over the whole int8 range,
# frozen, analyzed and all visible; and KEYTABLE (n, a int8[]): the
# existing keys of n = 10k, 100k and 1M random rows, in random order: row
# numbers drawn uniformly, so the rows spread over the whole table (until
# 2026-11-26 they came from TABLESAMPLE SYSTEM_ROWS, whole heap blocks: 1M
# keys then sat on about 11k of the table's 540k blocks); load_rows'
# i is an int4, so its shift wraps at 32 bits.  GPU_KEY_DUP=d: d rows per
# key (rows i of one i / d share it), for the posting form's measures
# GPU_KEY_TYPE=uuid: k is a uuid made of two hashes of the row number,
# spread over the whole uuid range (the uuid primary-key case).
count_table() {
    local t0 t1 t2
    local d=${GPU_KEY_DUP:-1}
    local kr="hashint8(i) # (i << 20)" kk="hashint8(i) # (i::int4 << 20)"
    local ktype=${GPU_KEY_TYPE:-int8}
    if [ "$d" != 1 ]; then
        kr="hashint8(i / $d) # ((i / $d) << 20)"
        kk="hashint8(i / $d) # ((i / $d)::int4 << 20)"
    fi
    if [ "$ktype" = uuid ]; then
        kr="(lpad(to_hex(hashint8(i)), 16, '0') || lpad(to_hex(hashint8(i + 4000000000)), 16, '0'))::uuid"
        kk=$kr
    fi
    q -c "CREATE EXTENSION IF NOT EXISTS gbtree" >/dev/null
    q -c "DROP TABLE IF EXISTS $1, $2" >/dev/null
    q -c "CREATE TABLE $1 (id int8, k $ktype) WITH (autovacuum_enabled = off)" >/dev/null
    t0=$(now)
    load_rows "$1" "$3" "$kr"
    t1=$(now)
    q -c "VACUUM (FREEZE, ANALYZE) $1" >/dev/null
    t2=$(now)
    echo "loaded $3 rows in $(sub "$t1" "$t0") s, vacuumed in $(sub "$t2" "$t1") s"
    q >/dev/null <<KEYS
CREATE EXTENSION IF NOT EXISTS tsm_system_rows;
CREATE EXTENSION IF NOT EXISTS pg_prewarm;
CREATE TABLE $2 (n int, a $ktype[]);
INSERT INTO $2 SELECT n, (SELECT array_agg($kk ORDER BY random())
                          FROM (SELECT DISTINCT (1 + floor(random() * $3))::int8 AS i
                                FROM generate_series(1, n + n / 10 + 100) LIMIT n) s)
FROM unnest(ARRAY[10000, 100000, 1000000]) n;
KEYS
}
