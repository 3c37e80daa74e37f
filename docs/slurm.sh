#!/usr/bin/env bash
# Run the chains of one exactmh run as a Slurm job array: chain k on array
# task k, then one `exactmh summary` of all the files. See docs/scale-out.md.
#
#   docs/slurm.sh submit      # on the login node: submits the array and the summary
#   CHOICE=run/choice.json docs/slurm.sh choose   # optional, first: the automatic
#                             # default's choice, made once for every task
#
# Slurm then runs this script as "slurm.sh chain" in every array task
# (SLURM_ARRAY_TASK_ID = k runs `exactmh sample --chain-id k`) and as
# "slurm.sh summary" once all tasks have succeeded. Every chain draws from
# the same random stream as chain k of one in-process run, so the files
# equal those of `exactmh sample --chains $CHAINS`, draw for draw.
#
# Pre-emption: Slurm sends SIGTERM (here 120 s before the time limit too,
# --signal); exactmh writes its checkpoint and exits with code 4, and the
# task requeues itself; the requeued task finds the checkpoint and resumes.
# A requeued task does not start again at once: Slurm holds it for about
# two minutes (squeue shows it pending with reason BeginTime), so expect
# that gap in its log, which the requeued task appends to
# (--open-mode=append) rather than truncating.
#
# Settings (environment variables, with these defaults):
#   EXACTMH  the exactmh binary (in a clone of the repository: go install ./cmd/exactmh;
#            the first build takes minutes)
#   DATA     the data file; OUT the output prefix (on a shared file system)
#   CHAINS   chains in all (the array is 0..CHAINS-1); SEED, WARMUP, DRAWS
#   KERNEL   an explicit kernel: --chain-id needs one, or a choice file:
#   CHOICE   the automatic default's choice file, written once by "choose"
#            (exactmh sample --choose-only); when set, the tasks sample
#            with --choice "$CHOICE" instead of --kernel "$KERNEL"
#   MODEL    the model flags (split on spaces; no globbing)
#SBATCH --job-name=exactmh
#SBATCH --cpus-per-task=1
#SBATCH --mem=4G
#SBATCH --time=04:00:00
#SBATCH --requeue
#SBATCH --signal=B:TERM@120
#SBATCH --output=exactmh-%A_%a.log
#SBATCH --open-mode=append
set -euo pipefail
set -f # MODEL holds parentheses and '>', never glob it

EXACTMH=${EXACTMH:-exactmh}
DATA=${DATA:-$HOME/data/flights-3m.parquet}
OUT=${OUT:-$HOME/runs/flights/chain}
CHAINS=${CHAINS:-4}
SEED=${SEED:-2026}
WARMUP=${WARMUP:-1000}
DRAWS=${DRAWS:-1000}
KERNEL=${KERNEL:-tunamh-cv-cn}
CHOICE=${CHOICE:-}
MODEL=${MODEL:---response delay>15 --terms log(distance),hour(date),dow(date),month(date),cat(origin;top=8),cat(destination;top=8)}
# shellcheck disable=SC2206 # split on purpose
model=($MODEL)

kernel=(--kernel "$KERNEL")
if [ -n "$CHOICE" ]; then
	kernel=(--choice "$CHOICE")
fi

mode=${1:-chain}
case "$mode" in
choose)
	# The automatic default's choice (MAP, Laplace approximation, timed
	# pilots: seconds to minutes), once, for every task to read. It reads
	# the whole data file: run it in a job (sbatch docs/slurm.sh choose) on
	# a small login node.
	: "${CHOICE:?set CHOICE to the choice file to write}"
	mkdir -p "$(dirname "$CHOICE")"
	"$EXACTMH" sample --data "$DATA" "${model[@]}" --seed "$SEED" --choose-only --choice "$CHOICE"
	;;
submit)
	# The array, then the summary once every task has succeeded. The
	# settings travel in the environment (sbatch exports it by default).
	mkdir -p "$(dirname "$OUT")"
	if [ -n "$CHOICE" ] && [ ! -f "$CHOICE" ]; then
		echo "CHOICE=$CHOICE does not exist: write it first with \"CHOICE=$CHOICE $0 choose\"" >&2
		exit 2
	fi
	script=$(readlink -f "$0")
	job=$(sbatch --parsable --array=0-$((CHAINS - 1)) "$script" chain)
	job=${job%%;*}
	sbatch --parsable --dependency=afterok:"$job" --job-name=exactmh-summary \
		--output="$OUT-summary-%j.log" "$script" summary
	echo "submitted array job $job (chains 0-$((CHAINS - 1))) and its summary"
	;;
chain)
	k=${SLURM_ARRAY_TASK_ID:?not in a Slurm job array: run "docs/slurm.sh submit"}
	ckpt="$OUT.chain$k.ckpt"
	resume=()
	if [ -f "$ckpt" ]; then
		resume=(--resume) # a requeued task continues its checkpoint
	fi
	# exactmh runs in the background so that this shell, which Slurm
	# signals (--signal=B:TERM), can pass SIGTERM on to it.
	"$EXACTMH" sample --data "$DATA" "${model[@]}" "${kernel[@]}" \
		--chains "$CHAINS" --chain-id "$k" --seed "$SEED" \
		--warmup "$WARMUP" --draws "$DRAWS" \
		--out "$OUT" --checkpoint "$ckpt" "${resume[@]}" --progress 30s &
	pid=$!
	trap 'kill -TERM "$pid" 2>/dev/null || true' TERM INT
	rc=0
	wait "$pid" || rc=$?
	if [ "$rc" -gt 128 ]; then # the trap interrupted wait: wait for exactmh itself
		rc=0
		wait "$pid" || rc=$?
	fi
	if [ "$rc" -eq 4 ] || [ "$rc" -eq 5 ]; then # interrupted (4: checkpoint written; 5: none yet): run again
		echo "task $k (chain $((k + 1)), ${OUT}_$((k + 1)).csv) interrupted (exit $rc); requeueing" >&2
		scontrol requeue "${SLURM_ARRAY_JOB_ID:-$SLURM_JOB_ID}_$k"
		exit 0
	fi
	exit "$rc"
	;;
summary)
	files=()
	for ((k = 1; k <= CHAINS; k++)); do
		files+=("${OUT}_$k.csv")
	done
	"$EXACTMH" summary "${files[@]}" | tee "$OUT-summary.txt"
	;;
*)
	echo "usage: $0 submit|choose|chain|summary" >&2
	exit 2
	;;
esac
