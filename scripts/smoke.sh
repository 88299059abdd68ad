#!/usr/bin/env bash
# Smoke test of the command-line tool (part of `make test`): the CLI's basic contract, then the
# tiny grid experiments/smoke.yaml (every model, 2 datasets, 1 split, 20 steps) run end to end
# through the batch runner, a second run that must reuse every cell, and the tables.
set -euo pipefail
dkp=${1:-build/dkp}
fail() { echo "smoke: FAILED: $*" >&2; exit 1; }
start=$(date +%s)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$dkp" --version >"$work/version" || fail "dkp --version"
grep -Eq '^BLAS: OpenBLAS .*; kernels in use: [A-Za-z0-9]+$' "$work/version" ||
  fail "dkp --version names no OpenBLAS kernels: $(cat "$work/version")"
"$dkp" data list --quiet >/dev/null || fail "dkp data list"
"$dkp" data verify --only uci/yacht >/dev/null || fail "dkp data verify"
"$dkp" data baseline --only yacht >"$work/baseline" || fail "dkp data baseline"
grep -Eq '^yacht +20 +-4\.[0-9]{3} \+- 0\.[0-9]{3} ' "$work/baseline" ||
  fail "dkp data baseline: no yacht line: $(cat "$work/baseline")"

# Bad input: clear error, exit code 2, nothing written.
expect_rc() {
  local want=$1; shift
  set +e; "$@" >/dev/null 2>"$work/err"; local rc=$?; set -e
  [ "$rc" = "$want" ] || fail "'$*' exited $rc, expected $want: $(cat "$work/err")"
  [ -s "$work/err" ] || fail "'$*' printed no error message"
}
expect_rc 2 "$dkp" nonsense
expect_rc 2 "$dkp" data baseline --only nope
expect_rc 2 "$dkp" run --dataset nope --model sgp --out "$work/bad"
expect_rc 2 "$dkp" bench model --reps 0
expect_rc 2 "$dkp" bench model --batch 0
expect_rc 2 "$dkp" bench blas --flops
# --flops counts through the preloaded shim: a step's flops in all and by routine; with two
# threads, each sample group's share of the step too (one run for both).
"$dkp" bench model --dataset yacht --model dgp --depth 2 --reps 2 --samples 2 --threads 2 \
  --test-samples 0 --flops --quiet >"$work/flops" 2>&1 ||
  fail "dkp bench model --flops: $(cat "$work/flops")"
grep -Eq '^dgp/global-inducing +2 +[0-9]+ .* 0\.[0-9]{4} ' "$work/flops" ||
  fail "dkp bench model --flops: no step GFlop: $(cat "$work/flops")"
grep -q 'depth 2, the step.s BLAS/LAPACK calls by routine' "$work/flops" &&
  grep -Eq '^  cblas_dgemm +[0-9.]+ +0\.[0-9]{4} ' "$work/flops" ||
  fail "dkp bench model --flops: no breakdown by routine: $(cat "$work/flops")"
grep -Eq '^  dgp/global-inducing depth 2: [0-9.]+ / [0-9.]+ ms$' "$work/flops" ||
  fail "dkp bench model --threads 2: no group times: $(cat "$work/flops")"
# A model other than the DGP needs no --inference (its default names the DGP's).
"$dkp" bench model --dataset yacht --model diwp --depth 2 --reps 1 --test-samples 0 --quiet \
  >"$work/bench-diwp" 2>&1 || fail "dkp bench model --model diwp: $(cat "$work/bench-diwp")"
grep -Eq '^diwp +2 ' "$work/bench-diwp" ||
  fail "dkp bench model --model diwp: no step row: $(cat "$work/bench-diwp")"
expect_rc 2 "$dkp" run --dataset yacht --model sgp --steps 0 --out "$work/bad"
expect_rc 2 "$dkp" run --dataset yacht --model sgp --elbo-repeats 0 --out "$work/bad"
expect_rc 2 "$dkp" run --dataset yacht --model diwp --delta-init -1 --out "$work/bad"
expect_rc 2 "$dkp" run --dataset yacht --model dwp --posterior gw --diwp-dof batch --out "$work/bad"
expect_rc 2 "$dkp" run --dataset yacht --model sgp --threads 0 --out "$work/bad"
# The memory guard: a step that cannot fit is refused before the model is built, with its bound.
expect_rc 2 "$dkp" run --dataset yacht --model dgp --inference global-inducing --samples 100000 \
  --out "$work/bad"
grep -q 'needs at least .* GiB of memory' "$work/err" || fail "memory guard: $(cat "$work/err")"
expect_rc 2 "$dkp" run --dataset yacht --model sgp --max-memory 1K --out "$work/bad"
expect_rc 2 "$dkp" run --dataset yacht --model sgp --max-memory 12Q --out "$work/bad"
expect_rc 2 "$dkp" run --dataset yacht --model sgp --seed -1 --out "$work/bad"
expect_rc 2 "$dkp" run --dataset yacht --model sgp --seed=-3 --out "$work/bad"
expect_rc 2 "$dkp" run --dataset yacht --model sgp --trace-every -1 --out "$work/bad"
expect_rc 2 "$dkp" run --dataset yacht --model dwp --posterior agw --stl maybe --out "$work/bad"
expect_rc 2 "$dkp" run --dataset yacht --model diwp --stl off --out "$work/bad"
expect_rc 2 "$dkp" run --dataset yacht --model dwp --posterior gw --stl mixing --out "$work/bad"
expect_rc 2 "$dkp" run --dataset yacht --model dwp --posterior gw --a-prime-scale 0.1 --out "$work/bad"
expect_rc 2 "$dkp" run --dataset yacht --model dwp --mu-param scaled --out "$work/bad"
expect_rc 2 "$dkp" run --dataset yacht --model dgp --mu-param bayesfunc --out "$work/bad"
[ ! -e "$work/bad" ] || fail "a failed run left $work/bad behind"

# Classification: MNIST with the robust-max DSVI DGP (tiny: 10 inducing points, width 5, 5 steps),
# its class predictions CSV, dkp predict on the run, and models that do not classify refusing it.
expect_rc 2 "$dkp" run --dataset mnist --model dwp --posterior gw --out "$work/bad"
expect_rc 2 "$dkp" run --dataset mnist --split 1 --model sgp --out "$work/bad"
"$dkp" run --dataset mnist --model dgp --inference dsvi --depth 2 --steps 5 --batch 200 \
  --samples 1 --kl-anneal 0 --width 5 --inducing 10 --test-samples 2 --elbo-repeats 1 \
  --threads 2 --out "$work/mnist" --predictions "$work/mnist.csv" --quiet >/dev/null ||
  fail "dkp run --dataset mnist"
grep -q '"classes": *10' "$work/mnist/result.json" || fail "mnist result.json: no classes"
grep -Eq '"test_acc": *(0|1|0\.[0-9]+)[,}]' "$work/mnist/result.json" ||
  fail "mnist result.json: no accuracy"
! grep -q '"test_rmse"' "$work/mnist/result.json" || fail "mnist result.json has an RMSE"
[ "$(head -1 "$work/mnist.csv")" = "index,y,predicted,log_density,p_0,p_1,p_2,p_3,p_4,p_5,p_6,p_7,p_8,p_9" ] ||
  fail "mnist predictions header: $(head -1 "$work/mnist.csv")"
[ "$(wc -l <"$work/mnist.csv")" = 10001 ] || fail "mnist predictions: not 10000 rows"
# The CSV's accuracy is result.json's: the fraction of rows whose predicted class is y.
acc=$(awk -F, 'NR > 1 { n++; if ($2 == $3) k++ } END { printf "%.4f", k / n }' "$work/mnist.csv")
json_acc=$(grep -Eo '"test_acc": *[0-9.e-]+' "$work/mnist/result.json" | grep -Eo '[0-9.e-]+$')
[ "$acc" = "$(printf '%.4f' "$json_acc")" ] || fail "mnist accuracy: CSV $acc, result $json_acc"
"$dkp" predict "$work/mnist" --samples 2 --out "$work/mnist-predict.csv" --quiet ||
  fail "dkp predict on the mnist run"
cmp -s "$work/mnist.csv" "$work/mnist-predict.csv" ||
  fail "dkp predict gives other class probabilities than dkp run"
# The same for a softmax model (the NNGP), with scaled pixels: dkp predict must reload both.
"$dkp" run --dataset mnist --model nngp --kernel relu --depth 2 --steps 3 --batch 100 \
  --samples 1 --inducing 10 --test-samples 2 --elbo-repeats 1 --pixels standard --pixel-scale 3 \
  --out "$work/mnist-nngp" --predictions "$work/mnist-nngp.csv" --quiet >/dev/null ||
  fail "dkp run --dataset mnist --model nngp"
"$dkp" predict "$work/mnist-nngp" --out "$work/mnist-nngp-predict.csv" --quiet ||
  fail "dkp predict on the mnist nngp run"
cmp -s "$work/mnist-nngp.csv" "$work/mnist-nngp-predict.csv" ||
  fail "dkp predict gives other class probabilities than dkp run (nngp)"

# And for the approximate-EP DGP (robust-max over moment-matched Gaussians).
"$dkp" run --dataset mnist --model dgp --inference aep --depth 2 --width 2 --steps 3 --batch 50 \
  --samples 1 --inducing 10 --test-samples 2 --elbo-repeats 1 --out "$work/mnist-aep" \
  --predictions "$work/mnist-aep.csv" --quiet >/dev/null || fail "dkp run --dataset mnist (aep)"
"$dkp" predict "$work/mnist-aep" --out "$work/mnist-aep-predict.csv" --quiet ||
  fail "dkp predict on the mnist aep run"
cmp -s "$work/mnist-aep.csv" "$work/mnist-aep-predict.csv" ||
  fail "dkp predict gives other class probabilities than dkp run (aep)"

# Binary classification (Rectangle-Images, not in the shared data): a synthetic stand-in in the
# .amat format, installed by data-scripts/fetch_rectangles.sh from a local mirror, trained with the
# probit by the DSVI DGP and the AEP DGP; dkp predict must reproduce the probabilities.
mkdir -p "$work/rect-mirror/rectangles"
awk -v n=120 -v seed=1 -f scripts/synthetic-rectangles.awk \
  >"$work/rect-mirror/rectangles/rectangles_im_train.amat"
awk -v n=60 -v seed=2 -f scripts/synthetic-rectangles.awk \
  >"$work/rect-mirror/rectangles/rectangles_im_test.amat"
data-scripts/fetch_rectangles.sh --from "$work/rect-mirror" --dest "$work/rect-data" >/dev/null ||
  fail "fetch_rectangles.sh --from"
# (the other datasets are missing from this data root, so the listing's exit status is 1)
"$dkp" data list --data "$work/rect-data" >"$work/rect-list" 2>/dev/null || true
grep -Eq '^rectangles +rectangles +180 +784 +1 +120/60$' "$work/rect-list" ||
  fail "dkp data list does not list the rectangles: $(grep rect "$work/rect-list")"
for inf in dsvi aep; do
  "$dkp" run --data "$work/rect-data" --dataset rectangles --model dgp --inference $inf --depth 2 \
    --width 2 --steps 10 --batch 40 --samples 1 --inducing 10 --test-samples 3 --elbo-repeats 1 \
    --out "$work/rect-$inf" --predictions "$work/rect-$inf.csv" --quiet >/dev/null ||
    fail "dkp run --dataset rectangles ($inf)"
  grep -q '"classes": *2' "$work/rect-$inf/result.json" || fail "rectangles ($inf): not 2 classes"
  [ "$(head -1 "$work/rect-$inf.csv")" = "index,y,predicted,log_density,p_0,p_1" ] ||
    fail "rectangles ($inf) predictions header: $(head -1 "$work/rect-$inf.csv")"
  "$dkp" predict "$work/rect-$inf" --data "$work/rect-data" --out "$work/rect-$inf-predict.csv" \
    --quiet || fail "dkp predict on the rectangles run ($inf)"
  cmp -s "$work/rect-$inf.csv" "$work/rect-$inf-predict.csv" ||
    fail "dkp predict gives other class probabilities than dkp run (rectangles, $inf)"
done
expect_rc 2 "$dkp" run --data "$work/rect-data" --dataset rectangles --split 1 --model sgp \
  --out "$work/bad"

# Optional data that is not installed: `dkp grid run` skips its cells, says so and exits 0.
mkdir -p "$work/no-rect"
"$dkp" grid run experiments/dsvi-rectangles.yaml --profile quick --data "$work/no-rect" \
  --results "$work/rect-grid" >"$work/rect-grid.log" 2>&1 ||
  fail "dkp grid run without the rectangles data: $(tail -3 "$work/rect-grid.log")"
grep -Eq '^computed 0, reused 0, failed 0, skipped [1-9][0-9]* \(data not installed\)$' \
  "$work/rect-grid.log" || fail "dkp grid run did not skip the rectangles cells: $(tail -3 "$work/rect-grid.log")"

# Two threads sharing the samples: the same numbers twice.
for d in t2a t2b; do
  "$dkp" run --dataset yacht --model dwp --posterior agw --depth 2 --steps 5 --test-samples 7 \
    --threads 2 --out "$work/$d" --predictions "$work/$d.csv" --quiet >/dev/null ||
    fail "dkp run --threads 2"
done
nums() { grep -E '"(elbo|test_ll|test_rmse)"' "$1/result.json"; }
[ "$(nums "$work/t2a" | wc -l)" = 3 ] || fail "--threads 2 run wrote no metrics"
[ "$(nums "$work/t2a")" = "$(nums "$work/t2b")" ] || fail "--threads 2 runs differ"
grep -q '"elbo_se"' "$work/t2a/result.json" || fail "result.json has no elbo_se"
# Calibration: coverages and the calibration error are fractions, and the predictions CSV's pit
# column reproduces the 95% coverage (the test points inside the central interval [0.025, 0.975]).
for k in test_coverage_50 test_coverage_90 test_coverage_95 test_calibration_error; do
  grep -Eq "\"$k\": ?(0|1|0\.[0-9]+|[0-9.]+e-[0-9]+)[,}]" "$work/t2a/result.json" ||
    fail "result.json: no fraction under $k"
done
[ "$(head -n 1 "$work/t2a.csv")" = "index,y,mean,variance,log_density,pit" ] ||
  fail "predictions CSV header: $(head -n 1 "$work/t2a.csv")"
cov=$(awk -F, 'NR > 1 { n++; if ($6 >= 0.025 && $6 <= 0.975) c++ } END { printf "%.17g", c / n }' "$work/t2a.csv")
want=$(grep -Eo '"test_coverage_95": ?[^,}]+' "$work/t2a/result.json" | grep -Eo '[0-9][0-9.e+-]*$')
[ "$(awk -v a="$cov" -v b="$want" 'BEGIN { print (a - b < 1e-12 && b - a < 1e-12) }')" = 1 ] ||
  fail "the predictions' pit column gives 95% coverage $cov, result.json $want"
# The training trace: the header and a row for the last step (5 steps, a row every 10 and at the
# last), the same for both runs.
[ "$(head -n 1 "$work/t2a/trace.csv")" = "step,elbo,expected_loglik,kl,kl_weight,lr" ] &&
  [ "$(tail -n +2 "$work/t2a/trace.csv" | cut -d, -f1 | tr '\n' ' ')" = "5 " ] ||
  fail "trace.csv: $(cat "$work/t2a/trace.csv")"
cmp -s "$work/t2a/trace.csv" "$work/t2b/trace.csv" || fail "--threads 2 runs' traces differ"
grep -Eq '"likelihood.log_noise_var": ?-?[0-9]' "$work/t2a/result.json" ||
  fail "result.json has no learned noise variance under scalar_parameters"

# Sticking the landing on A' and B as well: trains, and the configuration says so.
"$dkp" run --dataset yacht --model dwp --posterior abgw --depth 3 --steps 5 --test-samples 7 \
  --stl mixing --out "$work/stlmix" --quiet >/dev/null || fail "dkp run --stl mixing"
[ "$(nums "$work/stlmix" | wc -l)" = 3 ] || fail "--stl mixing run wrote no metrics"
grep -q 'stl=mixing' "$work/stlmix/manifest.json" || fail "manifest.json lacks stl=mixing"
grep -Eq '"blas_core": ?"[A-Za-z0-9]+"' "$work/stlmix/manifest.json" ||
  fail "manifest.json lacks the OpenBLAS kernels (blas_core)"
grep -Eq '"cpu": ?"[^"]+"' "$work/stlmix/manifest.json" ||
  fail "manifest.json lacks the CPU (cpu)"
# The Bartlett means parameterised as bayesfunc does (mu = mu_raw / sqrt(m)).
"$dkp" run --dataset yacht --model dwp --posterior gw --depth 3 --steps 5 --test-samples 7 \
  --mu-param bayesfunc --out "$work/muraw" --quiet >/dev/null || fail "dkp run --mu-param bayesfunc"
grep -q 'mu_param=bayesfunc' "$work/muraw/manifest.json" || fail "manifest.json lacks mu_param"

# dkp predict: a finished run's predictions again, without training. At the run's test points
# with the run's seed and threads it reproduces result.json's test_ll; the same points read from
# a file (original units, with a header and the target) give the same predictions CSV.
# predict_same RUN CSV: dkp predict --run RUN writes CSV and logs the test_ll of RUN/result.json.
predict_same() {
  "$dkp" predict --run "$1" --out "$2" 2>"$work/predict.log" ||
    fail "dkp predict --run $1: $(cat "$work/predict.log")"
  local want got
  want=$(grep -Eo '"test_ll": ?[^,}]+' "$1/result.json" | grep -Eo -- '-?[0-9][0-9.e+-]*$')
  got=$(grep -Eo 'test_ll -?[0-9][0-9.e+-]*' "$work/predict.log" | cut -d' ' -f2)
  [ -n "$want" ] && [ "$(awk -v a="$want" -v b="$got" 'BEGIN { print (a == b) }')" = 1 ] ||
    fail "dkp predict --run $1 gives test_ll '$got', the run '$want'"
}
predict_same "$work/t2a" "$work/pred.csv"
predict_same "$work/muraw" "$work/pmu.csv"  # the option read back from the manifest
ydir="$(sed -nE 's/.*"data_root": ?"([^"]+)".*/\1/p' "$work/t2a/manifest.json")/uci/yacht/data"
[ -f "$ydir/data.txt" ] || fail "yacht data not found at $ydir"
{
  echo "f1,f2,f3,f4,f5,f6,y"
  awk 'NR == FNR { rows[FNR] = $0; next } { print rows[$1 + 1] }' "$ydir/data.txt" \
    "$ydir/index_test_0.txt" | awk '{ $1 = $1; print }' OFS=,
} >"$work/points.csv"
"$dkp" predict --run "$work/t2a" --input "$work/points.csv" --out "$work/pred2.csv" --quiet ||
  fail "dkp predict --input"
cmp -s "$work/pred.csv" "$work/pred2.csv" || fail "dkp predict --input differs at the test points"
cmp -s "$work/pred.csv" "$work/t2a.csv" || fail "dkp predict and dkp run --predictions differ"
cut -d, -f1-6 "$work/points.csv" >"$work/features.csv"
"$dkp" predict --run "$work/t2a" --input "$work/features.csv" --quiet >"$work/pred3.csv" ||
  fail "dkp predict without targets"
[ "$(cut -d, -f1,3,4 "$work/pred.csv")" = "$(cat "$work/pred3.csv")" ] ||
  fail "dkp predict without targets: other means or variances"
cut -d, -f1-5 "$work/points.csv" >"$work/short.csv"
expect_rc 1 "$dkp" predict --run "$work/t2a" --input "$work/short.csv" --out "$work/bad.csv"
expect_rc 2 "$dkp" predict --run "$work/nope"
expect_rc 2 "$dkp" predict --run "$work/t2a" --samples 0
[ ! -e "$work/bad.csv" ] || fail "a failed dkp predict left its output behind"

# dkp params: what the run learned. A row per parameter; --csv gives one parameter's values on
# the scale the model uses (the noise variance: exp of the log stored in result.json).
"$dkp" params --run "$work/t2a" >"$work/params.txt" 2>"$work/err" ||
  fail "dkp params: $(cat "$work/err")"
grep -Eq '^layer1\.A_prime +100x100 ' "$work/params.txt" &&
  grep -Eq '^likelihood\.log_noise_var +1x1 +exp ' "$work/params.txt" ||
  fail "dkp params: $(cat "$work/params.txt")"
"$dkp" params --run "$work/t2a" --csv layer1.A_prime >"$work/aprime.csv" ||
  fail "dkp params --csv"
[ "$(wc -l <"$work/aprime.csv")" = 100 ] &&
  [ "$(awk -F, '{print NF}' "$work/aprime.csv" | sort -u)" = 100 ] ||
  fail "dkp params --csv layer1.A_prime is not 100 x 100"
noise=$("$dkp" params --run "$work/t2a" --csv likelihood.log_noise_var)
log_noise=$(grep -Eo '"likelihood.log_noise_var": ?-?[0-9][0-9.e+-]*' "$work/t2a/result.json" |
  sed 's/.*: *//')
awk -v a="$noise" -v b="$log_noise" 'BEGIN { d = a - exp(b); exit !(d * d <= 1e-28 * a * a) }' ||
  fail "dkp params --csv likelihood.log_noise_var gives $noise, result.json exp($log_noise)"
"$dkp" params --run "$work/t2a" --json --name likelihood >"$work/params.json" &&
  grep -q '"name": "likelihood.log_noise_var"' "$work/params.json" &&
  ! grep -q '"layer1' "$work/params.json" || fail "dkp params --json --name"
expect_rc 2 "$dkp" params --run "$work/t2a" --csv nope
expect_rc 2 "$dkp" params --run "$work/t2a" --name nope
expect_rc 2 "$dkp" params --run "$work/nope"

# A checkpoint belongs to its configuration: another configuration in the same --out is an error,
# --force starts afresh, and a finished run keeps its final parameters.
ck="$work/ckpt"
"$dkp" run --dataset yacht --split 0 --model sgp --steps 30 --checkpoint-every 10 --out "$ck" \
  --quiet >/dev/null || fail "checkpoint run"
grep -qx 'step 30' "$ck/checkpoint.bin" || fail "a finished run did not keep its final checkpoint"
rm "$ck/result.json"
expect_rc 2 "$dkp" run --dataset yacht --split 1 --model sgp --steps 30 --checkpoint-every 10 \
  --out "$ck"
"$dkp" run --dataset yacht --split 1 --model sgp --steps 30 --checkpoint-every 10 --out "$ck" \
  --force --quiet >/dev/null || fail "--force over another configuration's checkpoint"
grep -Eq '"resumed_from_step": ?0[,}]' "$ck/result.json" || fail "--force did not start afresh"

# ---- Issue 42, the run side (dkp run): a run directory knows what it holds. ----
# i42_msg TEXT: the last expect_rc's error message contains TEXT.
i42_msg() { grep -qF -- "$1" "$work/err" || fail "expected '$1' in: $(cat "$work/err")"; }
i42="$work/i42"
mkdir -p "$i42"
sgp42=(--dataset yacht --split 0 --model sgp --checkpoint-every 10 --inducing 20 --test-samples 5)
# Usage errors before anything is read or written: --out empty or a file, --predictions a
# directory or under a file.
expect_rc 2 "$dkp" run "${sgp42[@]}" --steps 20 --out ""
i42_msg "--out is empty"
touch "$i42/file"
expect_rc 2 "$dkp" run "${sgp42[@]}" --steps 20 --out "$i42/file"
i42_msg "--out $i42/file is a file, not a run directory"
expect_rc 2 "$dkp" run "${sgp42[@]}" --steps 20 --out "$i42/p" --predictions "$i42"
i42_msg "--predictions $i42 is a directory: give a file name"
expect_rc 2 "$dkp" run "${sgp42[@]}" --steps 20 --out "$i42/p" --predictions "$i42/file/p.csv"
i42_msg "$i42/file is not a directory"
[ ! -e "$i42/p" ] || fail "a run with a bad --predictions touched its --out"
# One process at a time: while another holds --out's run.lock, dkp run exits 75 naming it.
mkdir -p "$i42/busy"
echo "pid 4242 on smokehost since 2026-01-01T00:00:00Z" >"$i42/busy/run.lock"
(exec 9>>"$i42/busy/run.lock" && flock 9 && exec sleep 60) &
holder=$!
for _ in $(seq 50); do flock -n "$i42/busy/run.lock" true || break; sleep 0.1; done
expect_rc 75 "$dkp" run "${sgp42[@]}" --steps 20 --out "$i42/busy"
i42_msg "$i42/busy is being run by pid 4242 on smokehost since 2026-01-01T00:00:00Z (run.lock); not starting a second run"
kill "$holder"
wait "$holder" 2>/dev/null || true
[ "$(ls "$i42/busy")" = run.lock ] || fail "a busy dkp run wrote into --out: $(ls "$i42/busy")"
"$dkp" run --help >"$work/run-help.txt"  # to a file: grep -q on a pipe can SIGPIPE dkp (pipefail)
grep -q '75 another process is running --out' "$work/run-help.txt" || fail "dkp run --help: no exit 75"
# A run on a copy of yacht's data: result.json records the data fingerprint (the manifest's) and
# the SGP's noise variance on its natural scale (softplus of the stored value, kept beside it).
mkdir -p "$i42/data/uci"
cp -r "$(sed -nE 's/.*"data_root": ?"([^"]+)".*/\1/p' "$ck/manifest.json")/uci/yacht" "$i42/data/uci/"
d42=(--data "$i42/data")
# The same copy with one digit changed: a fresh run warns that the files are not the pinned ones,
# and --strict-data refuses it (nothing written).
mkdir -p "$i42/edited/uci" && cp -r "$i42/data/uci/yacht" "$i42/edited/uci/"
sed -i '1s/^./9/' "$i42/edited/uci/yacht/data/data.txt"
expect_rc 1 "$dkp" run "${sgp42[@]}" --steps 2 --data "$i42/edited" --strict-data --out "$i42/strict"
i42_msg "are not the pinned ones (1 differ from data-scripts/SHA256SUMS: uci/yacht/data/data.txt)"
[ ! -e "$i42/strict" ] || fail "--strict-data left $i42/strict behind"
"$dkp" run "${sgp42[@]}" --steps 2 --data "$i42/edited" --out "$i42/lax" >/dev/null 2>"$work/err" ||
  fail "a run on edited data: $(cat "$work/err")"
i42_msg "the run goes on (--strict-data refuses)"
r42="$i42/run"
"$dkp" run "${sgp42[@]}" --steps 20 "${d42[@]}" --out "$r42" --quiet >/dev/null || fail "issue-42 run"
sha42=$(sed -nE 's/.*"data_sha256": ?"([0-9a-f]{64})".*/\1/p' "$r42/manifest.json")
[ -n "$sha42" ] && grep -q "\"data_sha256\": \"$sha42\"" "$r42/result.json" ||
  fail "result.json lacks the manifest's data_sha256 $sha42"
grep -Eq '"likelihood\.variance": [0-9][0-9.e+-]*[,}]?$' "$r42/result.json" &&
  grep -Eq '"likelihood\.variance\.unconstrained": -?[0-9]' "$r42/result.json" ||
  fail "result.json: no positive likelihood.variance beside its stored value"
"$dkp" params --run "$r42" "${d42[@]}" | grep -Eq '^likelihood\.variance +1x1 +softplus +[0-9]' ||
  fail "dkp params does not show the SGP's noise variance on its natural scale"
# Another configuration's result, without a checkpoint: refused, not overwritten.
cp -r "$r42" "$i42/other" && rm "$i42/other/checkpoint.bin"
expect_rc 2 "$dkp" run "${sgp42[@]}" --steps 30 "${d42[@]}" --out "$i42/other"
i42_msg "$i42/other holds the result of another configuration (hash "
i42_msg "use another --out, or --force to replace it"
# A truncated result.json in --out: named with the line and column where it stops, and the remedy;
# so is one whose config_hash is not a string.
cp -r "$r42" "$i42/trunc" && head -n 3 "$r42/result.json" >"$i42/trunc/result.json"
expect_rc 1 "$dkp" run "${sgp42[@]}" --steps 20 "${d42[@]}" --out "$i42/trunc"
i42_msg "$i42/trunc/result.json:4:1: not valid JSON: syntax error while parsing object key - unexpected end of input"
i42_msg "; --force recomputes the run"
sed -i -E 's/"config_hash": "([0-9a-f]+)"/"config_hash": 12/' "$i42/trunc/result.json"
echo '}' >>"$i42/trunc/result.json"
sed -i -E '3s/,$//' "$i42/trunc/result.json"
expect_rc 1 "$dkp" run "${sgp42[@]}" --steps 20 "${d42[@]}" --out "$i42/trunc"
i42_msg "$i42/trunc/result.json: config_hash is a number, not a string; --force recomputes the run"
# One changed digit in the checkpoint: its checksum fails; --force starts afresh.
cp -r "$r42" "$i42/edit" && rm "$i42/edit/result.json"
awk '/^param / && !done { $NF = "1.5p+3"; done = 1 } { print }' "$r42/checkpoint.bin" \
  >"$i42/edit/checkpoint.bin"
expect_rc 1 "$dkp" run "${sgp42[@]}" --steps 20 "${d42[@]}" --out "$i42/edit"
i42_msg "$i42/edit/checkpoint.bin: checksum mismatch: the checkpoint was changed or damaged after it was written"
i42_msg "--force discards it and starts afresh"
"$dkp" run "${sgp42[@]}" --steps 20 "${d42[@]}" --out "$i42/edit" --force --quiet >/dev/null &&
  grep -Eq '"resumed_from_step": ?0[,}]' "$i42/edit/result.json" || fail "--force over a damaged checkpoint"
# A legacy checkpoint (the format of the earlier binaries: no identity, no checksum) cannot be
# checked: refused, naming --resume-legacy and --force ...
to_v1() { sed -i -e '1s/ v2$/ v1/' -e '/^config_hash /d' -e '/^data_sha256 /d' -e '/^sha256 /d' "$1"; }
cp -r "$r42" "$i42/legacy" && rm "$i42/legacy/result.json" && to_v1 "$i42/legacy/checkpoint.bin"
expect_rc 1 "$dkp" run "${sgp42[@]}" --steps 20 "${d42[@]}" --out "$i42/legacy"
i42_msg "$i42/legacy/checkpoint.bin: a legacy checkpoint (format 1"
i42_msg "--resume-legacy resumes it"
# ... and with --resume-legacy it resumes when its directory's manifest has this run's
# configuration and data ...
"$dkp" run "${sgp42[@]}" --steps 20 "${d42[@]}" --resume-legacy --out "$i42/legacy" >/dev/null 2>"$i42/legacy.log" ||
  fail "a legacy checkpoint did not resume: $(cat "$i42/legacy.log")"
grep -q 'checkpoint.bin: a legacy checkpoint' "$i42/legacy.log" &&
  grep -Eq '"resumed_from_step": ?20[,}]' "$i42/legacy/result.json" ||
  fail "the legacy checkpoint was not resumed with a note: $(cat "$i42/legacy.log")"
# ... and not when it is beyond --steps (a 20-step checkpoint under a 10-step run's manifest).
"$dkp" run "${sgp42[@]}" --steps 10 "${d42[@]}" --out "$i42/short" --quiet >/dev/null || fail "10 steps"
cp -r "$r42" "$i42/long" && rm "$i42/long/result.json" && to_v1 "$i42/long/checkpoint.bin"
cp "$i42/short/manifest.json" "$i42/long/manifest.json"
expect_rc 2 "$dkp" run "${sgp42[@]}" --steps 10 "${d42[@]}" --resume-legacy --out "$i42/long"
i42_msg "$i42/long/checkpoint.bin is at step 20, beyond this run's --steps 10"
# Values used beside the values asked for: inducing points above N, threads above the samples,
# the default KL annealing longer than the run (each a warning too).
"$dkp" run --dataset yacht --split 0 --model dgp --inference global-inducing --depth 2 --steps 3 \
  --samples 2 --threads 4 --inducing 1000 --test-samples 3 --elbo-repeats 1 "${d42[@]}" \
  --out "$i42/eff" >/dev/null 2>"$i42/eff.log" || fail "effective values run: $(cat "$i42/eff.log")"
n42=$(grep -Eo '"n_train": ?[0-9]+' "$i42/eff/result.json" | grep -Eo '[0-9]+$')
grep -q "1000 inducing points requested but the training set has only $n42 points" "$i42/eff.log" &&
  grep -qF -- "--threads 4 is more than the 2 Monte Carlo samples of a training step (--samples): training and the final ELBO use 2 of the 4 threads" "$i42/eff.log" &&
  grep -qF -- "--kl-anneal 1000 (the default) is longer than the run (--steps 3)" "$i42/eff.log" ||
  fail "no warning of the values used: $(cat "$i42/eff.log")"
for f in result.json manifest.json; do
  for kv in "inducing\": 1000" "inducing_effective\": $n42" "threads\": 4" "threads_effective\": 2" \
    "kl_anneal\": 1000" "kl_anneal_effective\": 3"; do
    grep -q "\"$kv[,]\?$" "$i42/eff/$f" || fail "$f lacks \"$kv"
  done
done
# The DGP's diverged step says which step and why, as the SGP's non-finite ELBO does.
expect_rc 1 "$dkp" run --dataset yacht --split 0 --model dgp --inference global-inducing --depth 2 \
  --steps 5 --lr-schedule 0:1e6 --samples 1 --inducing 20 "${d42[@]}" --out "$i42/diverge"
i42_msg "the ELBO could not be evaluated at step 1"
i42_msg "most likely because the learning rate is too large"
# Other data now (one blank line more in data.txt: the same numbers, other files): the result is
# not reused, a checkpoint not resumed; --force recomputes.
cp -r "$r42" "$i42/ckdata" && rm "$i42/ckdata/result.json"
echo >>"$i42/data/uci/yacht/data/data.txt"
expect_rc 1 "$dkp" run "${sgp42[@]}" --steps 20 "${d42[@]}" --out "$r42"
i42_msg "the result with configuration hash"
i42_msg "was computed from other data: result.json records data_sha256 $sha42, the data now present (yacht split 0) hash to "
i42_msg "--force recomputes it"
expect_rc 1 "$dkp" run "${sgp42[@]}" --steps 20 "${d42[@]}" --out "$i42/ckdata"
i42_msg "$i42/ckdata/checkpoint.bin holds a checkpoint trained on other data (it records data_sha256 $sha42"
"$dkp" run "${sgp42[@]}" --steps 20 "${d42[@]}" --out "$r42" --force --quiet >/dev/null &&
  ! grep -q "\"data_sha256\": \"$sha42\"" "$r42/result.json" || fail "--force did not recompute on the new data"
# ---- end of issue 42, the run side ----

# dkp predict --hidden: the hidden layers' samples, from the same draws as the predictions (t2a:
# a depth-2 DWP, 7 test samples, one hidden layer of yacht's 6 features, 31 test points). The SGP
# has no hidden layers: a usage error, and neither file is written.
"$dkp" predict --run "$work/t2a" --out "$work/pred4.csv" --hidden "$work/hidden.csv" --quiet ||
  fail "dkp predict --hidden"
cmp -s "$work/pred.csv" "$work/pred4.csv" || fail "dkp predict --hidden changes the predictions"
[ "$(head -n 1 "$work/hidden.csv")" = "sample,layer,index,f1,f2,f3,f4,f5,f6" ] &&
  [ "$(wc -l <"$work/hidden.csv")" = $((1 + 7 * 31)) ] &&
  [ "$(tail -n 1 "$work/hidden.csv" | cut -d, -f1-3)" = "6,1,30" ] ||
  fail "dkp predict --hidden: $(head -n 2 "$work/hidden.csv")"
# scripts/hidden-summary.sh: one line per layer and column; by hand, two samples (1, 3 and 3, 7
# at two points) have sample means 2 and 5 (signal 2.25) and variances 1 and 4 (spread 2.5), so
# the share is 2.25 / 4.75.
summary="$(dirname "$0")/hidden-summary.sh"
"$summary" "$work/hidden.csv" >"$work/summary.txt" || fail "hidden-summary.sh"
[ "$(wc -l <"$work/summary.txt")" = 7 ] &&
  awk 'NR > 1 && !($5 >= 0 && $5 <= 1) { exit 1 }' "$work/summary.txt" ||
  fail "hidden-summary.sh: $(cat "$work/summary.txt")"
printf 'sample,layer,index,f1\n0,1,0,1\n0,1,1,3\n1,1,0,3\n1,1,1,7\n' >"$work/h2.csv"
[ "$("$summary" "$work/h2.csv" | tail -n 1)" = "$(printf '%-6s %-8s %14.6g %14.6g %8.3f' 1 f1 2.25 2.5 0.474)" ] ||
  fail "hidden-summary.sh by hand: $("$summary" "$work/h2.csv")"
expect_rc 2 "$summary" "$work/points.csv"
expect_rc 2 "$dkp" predict --run "$ck" --out "$work/bad.csv" --hidden "$work/bad-hidden.csv"
[ ! -e "$work/bad.csv" ] && [ ! -e "$work/bad-hidden.csv" ] ||
  fail "dkp predict --hidden on the SGP left a file behind"

# The library example (examples/train_predict.cpp) gives the numbers of the dkp run it mirrors.
example="$(dirname "$dkp")/dkp_example"
if [ -x "$example" ]; then
  "$example" 20 >"$work/example.out" 2>&1 || fail "dkp_example: $(cat "$work/example.out")"
  "$dkp" run --dataset yacht --split 0 --model dwp --posterior agw --depth 2 --steps 20 \
    --lr-schedule 0:0.01,10:0.001 --kl-anneal 1 --test-samples 100 --quiet \
    --out "$work/example-run" >/dev/null || fail "dkp run (the example's twin)"
  want=$(grep -Eo '"test_ll": ?[^,}]+' "$work/example-run/result.json" | grep -Eo -- '-?[0-9][0-9.e+-]*$')
  got=$(grep -Eo 'test_ll -?[0-9][0-9.e+-]*' "$work/example.out" | cut -d' ' -f2)
  [ -n "$want" ] && [ "$(awk -v a="$want" -v b="$got" 'BEGIN { print (a == b) }')" = 1 ] ||
    fail "dkp_example gives test_ll '$got', dkp run '$want'"
else
  fail "no dkp_example beside $dkp"
fi

# The smoke grid: every cell must succeed.
jobs=$(nproc 2>/dev/null || echo 1)
"$dkp" grid run experiments/smoke.yaml --results "$work/runs" -j "$jobs" --quiet >"$work/run1" 2>&1 \
  || { tail -30 "$work/run1" >&2; fail "dkp grid run experiments/smoke.yaml"; }
grep -q "failed 0" "$work/run1" || { tail -30 "$work/run1" >&2; fail "smoke grid had failed cells"; }
cells=$(grep -o 'computed [0-9]*' "$work/run1" | tail -1 | cut -d' ' -f2)
[ "${cells:-0}" -gt 0 ] || fail "smoke grid computed no cells"
# Every model counts its Cholesky factorisations (and jitter events) in training, the final ELBO
# and prediction.
for r in $(find "$work/runs" -name result.json); do
  for phase in train final_elbo predict; do
    tr -d ' \n' <"$r" | grep -Eq "\"$phase\":\{\"factorisations\":[1-9][0-9]*,\"jittered\":[0-9]+" ||
      fail "$r: no Cholesky count for $phase"
  done
done
# A second run reuses every result (config hashes match).
"$dkp" grid run experiments/smoke.yaml --results "$work/runs" --quiet >"$work/run2" 2>&1 \
  || fail "second dkp grid run"
grep -q "computed 0, reused $cells, failed 0" "$work/run2" \
  || { tail -3 "$work/run2" >&2; fail "second grid run did not reuse all $cells cells"; }
# dkp grid verify reruns a done cell as the runner did, into a scratch directory: the same machine
# and binary give bit-identical numbers, and the store is left exactly as it was.
store_state() { find "$work/runs" -printf '%p %s %T@\n' | sort; find "$work/runs" -type f -exec md5sum {} + | sort; }
store_state >"$work/store-before"
"$dkp" grid verify experiments/smoke.yaml --results "$work/runs" --cells 1 --quiet >"$work/verify" 2>&1 ||
  { cat "$work/verify" >&2; fail "dkp grid verify experiments/smoke.yaml"; }
grep -Eq '^OK  bit-identical  [0-9a-f]{16} ' "$work/verify" &&
  grep -q '^verified 1 cell of grid smoke (profile full): 1 OK' "$work/verify" ||
  fail "dkp grid verify: no bit-identical verdict: $(cat "$work/verify")"
store_state | cmp -s - "$work/store-before" || fail "dkp grid verify changed the store"

# dkp predict reproduces every model's test_ll from its run directory.
npred=0
for r in "$work"/runs/smoke/*/split*/*/; do
  predict_same "$r" "$work/p.csv"
  npred=$((npred + 1))
done
[ "$npred" = "$cells" ] || fail "dkp predict checked $npred of $cells smoke cells"

# Tables from the results: LaTeX and CSV, every cell present.
"$dkp" tables experiments/smoke.yaml --results "$work/runs" --out "$work/tables" \
  >"$work/tables.log" 2>&1 || { cat "$work/tables.log" >&2; fail "dkp tables"; }
for m in elbo test_ll test_rmse; do
  [ -s "$work/tables/smoke-$m.tex" ] && [ -s "$work/tables/smoke-$m.csv" ] \
    || fail "table smoke-$m missing"
done
! grep -Eq '\([1-9][0-9]* incomplete' "$work/tables.log" \
  || { cat "$work/tables.log" >&2; fail "tables flag incomplete cells"; }
# --splits N reads the first N splits only, and its tables say so; the smoke grid has split 0
# only, so --splits 1 keeps every cell (its tables differ from the others by that note alone).
"$dkp" tables experiments/smoke.yaml --results "$work/runs" --out "$work/tables-s1" --splits 1 \
  >"$work/s1.log" 2>&1 || { cat "$work/s1.log" >&2; fail "dkp tables --splits 1"; }
grep -q "Read with splits 0-0 only (dkp tables --splits 1)" "$work/tables-s1/smoke-elbo.md" ||
  fail "dkp tables --splits 1: its tables do not say which splits they read"
diff <(sed 's/ Read with splits 0-0 only[^.]*\.//' "$work/tables-s1/smoke-elbo.csv") \
  "$work/tables/smoke-elbo.csv" >/dev/null || fail "dkp tables --splits 1 changed a smoke cell"
"$dkp" tables experiments/smoke.yaml --results "$work/runs" --out "$work/tables-s0" --splits 0 \
  >/dev/null 2>"$work/err" && fail "dkp tables --splits 0 succeeded"
grep -q -- "--splits 0" "$work/err" || fail "dkp tables --splits 0: $(cat "$work/err")"
# A directory of the results root that no grid names is not read, and the tables say so.
mkdir -p "$work/runs/aaa-stray/yacht/split0/0123456789abcdef"
"$dkp" tables experiments/smoke.yaml --results "$work/runs" --out "$work/tables-stray" \
  >/dev/null 2>"$work/err" || fail "dkp tables with a stray directory: $(cat "$work/err")"
grep -q "aaa-stray is no grid's directory" "$work/err" || fail "stray directory: $(cat "$work/err")"
rm -r "$work/runs/aaa-stray"

# Many machines with GNU parallel: the plan's commands, run by parallel into a fresh store, leave
# every cell done, and the tables are those of `dkp grid run` on the same grid, byte for byte.
"$dkp" grid plan experiments/smoke.yaml --results "$work/par" 2>/dev/null >"$work/plan.txt" ||
  fail "dkp grid plan experiments/smoke.yaml"
[ "$(wc -l <"$work/plan.txt")" = "$cells" ] || fail "dkp grid plan printed $(wc -l <"$work/plan.txt") commands, not $cells"
# A store it cannot write into (here its grid directory is a file) is planned all the same, with a
# warning that the snapshot was not recorded.
mkdir -p "$work/nowrite" && touch "$work/nowrite/smoke"
"$dkp" grid plan experiments/smoke.yaml --results "$work/nowrite" >"$work/plan-nw.txt" 2>"$work/err" ||
  fail "dkp grid plan on a store it cannot write: $(cat "$work/err")"
[ "$(wc -l <"$work/plan-nw.txt")" = "$cells" ] && grep -q "planning without it" "$work/err" ||
  fail "dkp grid plan on a store it cannot write: $(cat "$work/err")"
parallel -j 2 <"$work/plan.txt" >"$work/par.log" 2>&1 || { tail -5 "$work/par.log" >&2; fail "parallel -j 2 over the plan"; }
"$dkp" grid status experiments/smoke.yaml --results "$work/par" >"$work/par.status" ||
  fail "dkp grid status after parallel"
grep -q "cells: done $cells, running 0, interrupted 0, missing 0, failed 0, damaged 0, stale 0; the done cells ran [0-9]*\.[0-9] CPU hours$" "$work/par.status" ||
  fail "after parallel: $(cat "$work/par.status")"
# A --results that does not exist, or is empty, says why every cell is missing.
mkdir -p "$work/empty-results"
for r in "$work/no-such-results" "$work/empty-results"; do
  "$dkp" grid status experiments/smoke.yaml --results "$r" >/dev/null 2>"$work/hint.err" ||
    fail "dkp grid status --results $r"
  grep -q "^note: --results $r: .*every cell is missing" "$work/hint.err" ||
    fail "grid status --results $r gives no hint: $(cat "$work/hint.err")"
done
# Several grids: a line each; one without the profile says so.
"$dkp" grid status experiments/toy.yaml experiments/smoke.yaml --profile sample --results "$work/par" \
  >"$work/multi.status" || fail "dkp grid status with two grids"
grep -q "^grid toy (profile sample, .*cells: done 0" "$work/multi.status" &&
  grep -q "^grid smoke (profile sample): no such profile" "$work/multi.status" &&
  grep -q "^all (once each, profile sample): 0 done cells, which ran 0.0 CPU hours$" "$work/multi.status" ||
  fail "grid status, two grids: $(cat "$work/multi.status")"
"$dkp" tables experiments/smoke.yaml --results "$work/par" --out "$work/par-tables" >/dev/null 2>&1 ||
  fail "dkp tables after parallel"
for f in "$work"/tables/smoke-*; do
  cmp -s "$f" "$work/par-tables/$(basename "$f")" || fail "parallel and grid run give different $(basename "$f")"
done
# ---- Issue 42, the store side (dkp grid status/run, dkp tables): locks, damage, data. ----
# On a copy of the smoke store: s42_run WANT_RC CMD...: stdout and stderr to $work/s42.out.
s42_run() {
  local want=$1; shift
  set +e; "$@" >"$work/s42.out" 2>&1; local rc=$?; set -e
  [ "$rc" = "$want" ] || fail "'$*' exited $rc, expected $want: $(tail -5 "$work/s42.out")"
}
s42_has() { grep -qF -- "$1" "$work/s42.out" || fail "expected '$1' in: $(cat "$work/s42.out")"; }
st42="$work/store42"
cp -r "$work/runs" "$st42"
g42=(experiments/smoke.yaml --results "$st42")
c42=($(find "$st42/smoke" -name result.json | sort | head -2))
d1=$(dirname "${c42[0]}") && h1=$(basename "$d1")
d2=$(dirname "${c42[1]}") && h2=$(basename "$d2")
# A truncated result.json is damaged, named with its path and the parse error (not "running").
head -c 100 "$d1/result.json" >"$work/s42.tmp" && mv "$work/s42.tmp" "$d1/result.json"
s42_run 0 "$dkp" grid status "${g42[@]}"
s42_has "done $((cells - 1)), running 0, interrupted 0, missing 0, failed 0, damaged 1, stale 0"
s42_run 0 "$dkp" grid status "${g42[@]}" --verbose
s42_has "damaged     $h1 "
grep -Eq -- "-- $d1/result.json:[0-9]+:[0-9]+: not valid JSON: " "$work/s42.out" ||
  fail "grid status --verbose does not name $d1/result.json:LINE:COLUMN: $(cat "$work/s42.out")"
# grid run does not recompute it silently: it names it with the remedy and exits 1; so do tables.
s42_run 1 "$dkp" grid run "${g42[@]}" --quiet
s42_has "computed 0, reused $((cells - 1)), failed 0, damaged 1"
s42_has "to recompute it: dkp grid run experiments/smoke.yaml --results $st42 --force --cell $h1"
s42_run 1 "$dkp" tables "${g42[@]}" --out "$work/t42" --quiet
s42_has "dkp tables: grid smoke (profile full) has 1 damaged cell (left out of its tables):"
s42_has "$h1 "
grep -Eq -- "$d1/result.json:[0-9]+:[0-9]+: not valid JSON: " "$work/s42.out" ||
  fail "dkp tables does not name $d1/result.json:LINE:COLUMN: $(cat "$work/s42.out")"
# --force --cell PREFIX recomputes that cell (cleared first) and no other.
s42_run 0 "$dkp" grid run "${g42[@]}" --force --cell "${h1:0:6}" --quiet
s42_has "computed 1, reused 0, failed 0"
grep -q "\"config_hash\": \"$h1\"" "$d1/result.json" || fail "--force --cell did not recompute $h1"
# A results root that does not exist is named beside its "missing" cells.
s42_run 0 "$dkp" grid status experiments/smoke.yaml --results "$work/no-such-store"
s42_has "note: --results $work/no-such-store: no such directory"
# dkp run --config: an unknown key is named with its line and the closest option; a grid file
# given there says so.
printf 'dataset: yacht\ntest_sample: 10\n' >"$work/s42-config.yaml"
s42_run 2 "$dkp" run --config "$work/s42-config.yaml" --out "$work/s42-config-run"
s42_has "$work/s42-config.yaml:2: unknown key 'test_sample' (did you mean 'test-samples'?)"
s42_run 2 "$dkp" run --config experiments/smoke.yaml --out "$work/s42-config-run"
s42_has "(a grid file? it is run with 'dkp grid run FILE'"
# dkp run --spec: a configuration flag beside it, an unreadable file and an incomplete text are
# usage errors; the grid runner's cells above were all started with it.
s42_run 2 "$dkp" run --spec "$(printf 'dkp-run-v1\ndataset=yacht\n')" --out "$work/s42-spec-run"
s42_has "--spec: run configuration: no 'split'"
s42_run 2 "$dkp" run --spec "$work/no-such-spec" --out "$work/s42-spec-run"
s42_has "is neither a configuration (dkp-run-v1 lines) nor a readable file"
s42_run 2 "$dkp" run --spec "$work/no-such-spec" --seed 3 --out "$work/s42-spec-run"
s42_has "--spec gives the whole configuration: --seed cannot be given with it"
# Without --out, dkp run says where its run directory is.
# (run from a scratch directory, with the data root dkp would find from here: $DKP_DATA, ./data,
# then ../shared/data)
if [ -n "${DKP_DATA:-}" ]; then droot=$DKP_DATA; elif [ -d data ]; then droot=data; else droot=../shared/data; fi
droot=$(cd "$droot" && pwd)
dkp_abs=$(realpath "$dkp")
(cd "$work" && "$dkp_abs" run --dataset yacht --split 0 --model sgp --steps 5 --kl-anneal 1 \
  --test-samples 2 --data "$droot" >"$work/s42.out" 2>&1) ||
  fail "dkp run without --out: $(tail -3 "$work/s42.out")"
s42_has "run directory: results/runs/adhoc/yacht/split0/"
# An empty --cell (an unset variable) is a usage error, not every cell: nothing is recomputed.
s42_run 2 "$dkp" grid run "${g42[@]}" --force --cell "" --quiet
s42_has "--cell: empty configuration hash"
s42_run 2 "$dkp" grid verify "${g42[@]}" --cell " "
s42_has "--cell: empty configuration hash"
# A cell without a result whose run.lock another process holds is running (the holder named),
# skipped by grid run as running elsewhere, and --force refuses to clear it.
mv "$d2/result.json" "$work/s42-result.json"
echo "pid 4343 on smokehost since 2026-01-01T00:00:00Z" >"$d2/run.lock"
(exec 9>>"$d2/run.lock" && flock 9 && exec sleep 60) &
holder42=$!
for _ in $(seq 50); do flock -n "$d2/run.lock" true || break; sleep 0.1; done
s42_run 0 "$dkp" grid status "${g42[@]}" --verbose
s42_has "running     $h2 "
s42_has "being run by pid 4343 on smokehost since 2026-01-01T00:00:00Z"
s42_has "done $((cells - 1)), running 1, interrupted 0"
s42_run 1 "$dkp" grid run "${g42[@]}" --force --cell "$h2"
s42_has "is being run by pid 4343 on smokehost since 2026-01-01T00:00:00Z ($d2/run.lock): not clearing it"
s42_run 0 "$dkp" grid run "${g42[@]}" --quiet
s42_has "computed 0, reused $((cells - 1)), failed 0, running elsewhere 1"
kill "$holder42"
wait "$holder42" 2>/dev/null || true
s42_run 0 "$dkp" grid status "${g42[@]}"
s42_has "done $((cells - 1)), running 0, interrupted 1, missing 0"
mv "$work/s42-result.json" "$d2/result.json"
# A result made from other data than the data now present is stale: reported, not reused; the
# tables leave it out with a warning.
# (Edited by hand here, the cell would be damaged, modified since dkp wrote it, as the grid's
# index.tsv says; without its index line, as a cell of a dkp before the index, it is stale.)
for f in result.json manifest.json; do
  sed -i -E 's/"data_sha256": ?"[0-9a-f]*"/"data_sha256": "0123456789abcdef"/' "$d2/$f"
done
index42="$(dirname "$(dirname "$(dirname "$d2")")")/index.tsv"
s42_run 0 "$dkp" grid status "${g42[@]}" --verbose
s42_has "damaged     $h2 "
s42_has "was modified after dkp wrote it"
s42_run 1 "$dkp" grid index --results "$(dirname "$(dirname "$(dirname "$(dirname "$d2")")")")"
s42_has "1 modified"
sed -i "/$h2/d" "$index42"
s42_run 0 "$dkp" grid status "${g42[@]}" --verbose
s42_has "stale       $h2 "
s42_has "result made from other data: data_sha256 0123456789abcdef, the data of "
s42_has "damaged 0, stale 1"
s42_run 1 "$dkp" grid run "${g42[@]}" --quiet
s42_has "computed 0, reused $((cells - 1)), failed 0, stale 1"
s42_has "--force --cell $h2"
s42_run 0 "$dkp" tables "${g42[@]}" --out "$work/t42"
s42_has "$h2 "
s42_has "left out of the tables: result made from other data"
# The data themselves changed (yacht's data.txt one blank line longer, under another data root):
# every yacht cell is stale; boston, not installed there, is not checked.
root42=$(sed -nE 's/.*"data_root": ?"([^"]+)".*/\1/p' "$d1/manifest.json")
mkdir -p "$work/data42/uci"
cp -r "$root42/uci/yacht" "$work/data42/uci/"
echo >>"$work/data42/uci/yacht/data/data.txt"
nyacht=$(find "$st42/smoke/yacht" -name result.json | wc -l)
s42_run 0 "$dkp" grid status "${g42[@]}" --data "$work/data42"
grep -Eq "stale $nyacht(;|$)" "$work/s42.out" || fail "not all $nyacht yacht cells stale: $(cat "$work/s42.out")"
# A mistyped or empty --results: an error naming it, for one grid; for a directory of grids, only
# when no grid has any cell (the others get a note).
s42_run 2 "$dkp" tables experiments/smoke.yaml --results "$work/nope42" --out "$work/t42"
s42_has "--results $work/nope42: no such directory"
mkdir -p "$work/empty42" "$work/grids42"
s42_run 1 "$dkp" tables experiments/smoke.yaml --results "$work/empty42" --out "$work/t42"
s42_has "no cell of grid smoke (profile full) under $work/empty42/smoke: is --results right?"
sed 's/^name: smoke$/name: smoke42/' experiments/smoke.yaml >"$work/grids42/a.yaml"
sed 's/^name: smoke$/name: other42/; s/^  seed: 0$/  seed: 42/' experiments/smoke.yaml \
  >"$work/grids42/b.yaml"
s42_run 0 "$dkp" tables "$work/grids42" --results "$st42" --out "$work/t42"
s42_has "note: no cell of grid other42 (profile full) under $st42/other42 yet: its tables are empty"
s42_run 1 "$dkp" tables "$work/grids42" --results "$work/empty42" --out "$work/t42"
s42_has "no cell of any of the 2 grids under $work/empty42: is --results right?"
# ---- end of issue 42, the store side ----
# The compositional-uncertainty toy (dkp toy): its table beside the paper's, every trial, the
# figure's samples; bad options exit 2.
"$dkp" toy --trials 2 --steps 20 --elbo-samples 10 --var-samples 50 --figure-samples 3 \
  --jobs 2 --out "$work/tables" --quiet >"$work/toy.out" || fail "dkp toy"
"$dkp" toy --trials 2 --steps 20 --elbo-samples 10 --var-samples 50 --figure-samples 3 \
  --jobs 1 --out "$work/toy1" --quiet >/dev/null || fail "dkp toy --jobs 1"
cmp -s "$work/tables/compositional-table1.csv" "$work/toy1/compositional-table1.csv" ||
  fail "dkp toy: --jobs 2 and --jobs 1 give different tables"
[ "$(grep -c ',13.43,8.03$\|,23.15,6.80$\|,36.31,3.55$' "$work/tables/compositional-table1.csv")" = 3 ] ||
  fail "compositional-table1.csv lacks the paper's ELBOs: $(cat "$work/tables/compositional-table1.csv")"
[ "$(wc -l <"$work/tables/compositional-trials.csv")" = 7 ] || fail "compositional-trials.csv: not 6 trials"
[ "$(wc -l <"$work/tables/compositional-figure5.csv")" = $((1 + 3 * 3 * 3 * 101)) ] ||
  fail "compositional-figure5.csv: not 3 posteriors x 3 layers x 3 samples x 101 points"
[ "$(grep -c '^<g>$' "$work/tables/compositional-figure5.svg")" = 9 ] ||
  fail "compositional-figure5.svg: not 3 posteriors x (2 layers + composition) panels"
# The toy as a dataset of the grids (experiments/toy.yaml): trial 1 of `dkp run --dataset toy`
# trains exactly as trial 1 of dkp toy (the same streams; its first ELBO estimate, of 10 samples,
# is dkp toy's with --elbo-samples 10) and records each layer's variance at 0.
"$dkp" run --dataset toy --split 1 --model cdgp --posterior jointly-gaussian --depth 2 \
  --kernel periodic --marginalise analytic --steps 20 --lr-schedule 0:0.001 --kl-anneal 0 \
  --samples 10 --test-samples 10 --inducing 10 --batch 50 --seed 0 --elbo-repeats 1 --out "$work/toyrun" \
  --quiet >/dev/null || fail "dkp run --dataset toy"
grep -q '"var_f2_at_0":' "$work/toyrun/result.json" || fail "toy result.json: no var_f2_at_0"
toy_elbo=$(grep -o '"elbo":[^,]*' "$work/toyrun/result.json" | cut -d: -f2)
grid_total=$(awk -v e="$toy_elbo" 'BEGIN { printf "%.17g", 50 * e }')
toy_total=$(grep '^jointly-gaussian,1,' "$work/tables/compositional-trials.csv" | cut -d, -f3)
[ "$(awk -v a="$grid_total" -v b="$toy_total" 'BEGIN { print (a - b < 1e-9 && b - a < 1e-9) }')" = 1 ] ||
  fail "toy trial 1: the grid's ELBO x 50 = $grid_total, dkp toy's $toy_total"
expect_rc 2 "$dkp" toy --trials 2
expect_rc 2 "$dkp" toy --posterior mean-field --out "$work/badtoy"
expect_rc 2 "$dkp" toy --trials 0 --out "$work/badtoy"
expect_rc 2 "$dkp" toy --marginalise integrate --out "$work/badtoy"
[ ! -e "$work/badtoy" ] || fail "dkp toy with bad options wrote $work/badtoy"
# Your own data (README, "Your own data"): the example datasets, a regression run with a DWP, a
# classification run, and a grid over the regression set writing its tables; the user dataset's
# fingerprint joins the hash.
"$dkp" data example --dest "$work/mydata" >/dev/null || fail "dkp data example"
"$dkp" data describe friedman --data "$work/mydata" | grep -q '5 splits (random:5:0.1:0)' ||
  fail "dkp data describe friedman"
"$dkp" run --data "$work/mydata" --dataset friedman --split 0 --model dwp --posterior gw --depth 2 \
  --steps 30 --kl-anneal 10 --out "$work/friedman0" --quiet >/dev/null || fail "dkp run --dataset friedman"
grep -q '\\ndata=[0-9a-f]\{16\}\\n' "$work/friedman0/manifest.json" ||
  fail "friedman: no data fingerprint in the canonical configuration"
"$dkp" run --data "$work/mydata" --dataset rings --split 1 --model dgp --inference dsvi \
  --steps 30 --kl-anneal 10 --out "$work/rings1" --quiet >/dev/null || fail "dkp run --dataset rings"
grep -q '"test_acc":' "$work/rings1/result.json" || fail "rings: no test accuracy"
sed 's/steps: 2000/steps: 30/; s/\[\[0, 1.0e-2\], \[1000, 1.0e-3\]\]/[[0, 1.0e-2]]/; s/kl_anneal: 100/kl_anneal: 10/' \
  examples/grids/friedman.yaml >"$work/friedman-grid.yaml"
"$dkp" grid run "$work/friedman-grid.yaml" --data "$work/mydata" --results "$work/myresults" \
  -q >/dev/null 2>&1 || fail "dkp grid run (friedman)"
"$dkp" tables "$work/friedman-grid.yaml" --data "$work/mydata" --results "$work/myresults" \
  --out "$work/mytables" -q >/dev/null 2>&1 || fail "dkp tables (friedman)"
grep -q '| se | friedman |' "$work/mytables/friedman-test_ll.md" || fail "friedman: no table row"
# Every LaTeX table compiles standalone (`make deps` installs pdflatex; DKP_SMOKE_NO_LATEX=1 skips
# this on a machine without TeX).
if [ "${DKP_SMOKE_NO_LATEX:-0}" != 1 ]; then
  command -v pdflatex >/dev/null || fail "pdflatex not found (run make deps, or set DKP_SMOKE_NO_LATEX=1)"
  ntex=0
  for f in "$work"/tables/*.tex; do
    [ -e "$f" ] || continue
    (cd "$work/tables" && pdflatex -interaction=nonstopmode -halt-on-error "$(basename "$f")" \
      >/dev/null 2>&1) || fail "pdflatex $(basename "$f")"
    ntex=$((ntex + 1))
  done
  [ "$ntex" -gt 0 ] || fail "no LaTeX table written"
fi
echo "smoke: OK, $cells grid cells ($(( $(date +%s) - start )) s)"
