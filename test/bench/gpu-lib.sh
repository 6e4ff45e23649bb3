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
