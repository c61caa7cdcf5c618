#!/usr/bin/env bash
# Runs a ringsim sweep as a Slurm job array (one shard per task) and a dependent merge job.
#
#   scripts/slurm-sweep.sh [--ringsim PATH] [--tasks N] [--cpus C] [--partition P] [--time T]
#                          [--wait] -o OUT.csv -- SWEEP-ARGS...
#
# SWEEP-ARGS are `ringsim sweep`'s: a sweep file and/or axis flags. Array task i (0-based) runs
#   ringsim sweep SWEEP-ARGS --threads C --shard i+1/N --resume -o OUT.csv.slurm/shard-(i+1)-of-N.csv
# and the merge job, submitted with --dependency=afterok:<array job>, runs
#   ringsim merge -o OUT.csv OUT.csv.slurm/shard-1-of-N.csv ... shard-N-of-N.csv
# which writes the unsharded sweep's bytes (atomically) or fails.
#
# OUT.csv.slurm/ (next to OUT.csv) holds the generated batch scripts, the shard files and the
# jobs' logs (slurm-JOBID_TASK.out, slurm-JOBID.out). The shards are kept after the merge:
# running the same command again resumes from them (--resume keeps their complete rows), so a
# sweep whose tasks were killed or timed out costs only its missing rows. A sweep changed under
# the same -o makes its tasks fail (ringsim refuses to resume another sweep's file): remove
# OUT.csv.slurm/ first.
#
# Prints the two job ids. With --wait, waits for the merge job and exits 0 only if it completed
# (1 otherwise); interrupting the wait leaves the jobs queued (scancel them by id). Bad arguments: one line on stderr, exit 2. sbatch's own environment variables
# (SBATCH_ACCOUNT, SBATCH_QOS, ...) apply to both jobs.
set -euo pipefail

prog=slurm-sweep
usage="usage: scripts/slurm-sweep.sh [--ringsim PATH] [--tasks N] [--cpus C] [--partition P] [--time T] [--wait] -o OUT.csv -- SWEEP-ARGS..."

die_usage() { echo "$prog: $1" >&2; exit 2; }
die() { echo "$prog: $1" >&2; exit 1; }

ringsim=""
tasks=16
cpus=1
partition=""
time_limit=""
wait=0
out=""

# A value that starts with '-' is the next option: "--tasks -o out.csv" is missing a value.
need_value() { [[ $# -ge 2 && -n "$2" && "$2" != -* ]] || die_usage "$1 needs a value ($usage)"; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        --ringsim) need_value "$@"; ringsim=$2; shift 2 ;;
        --ringsim=*) ringsim=${1#*=}; shift ;;
        --tasks) need_value "$@"; tasks=$2; shift 2 ;;
        --tasks=*) tasks=${1#*=}; shift ;;
        --cpus) need_value "$@"; cpus=$2; shift 2 ;;
        --cpus=*) cpus=${1#*=}; shift ;;
        --partition|-p) need_value "$@"; partition=$2; shift 2 ;;
        --partition=*) partition=${1#*=}; shift ;;
        --time|-t) need_value "$@"; time_limit=$2; shift 2 ;;
        --time=*) time_limit=${1#*=}; shift ;;
        --wait) wait=1; shift ;;
        -o|--output) need_value "$@"; out=$2; shift 2 ;;
        --output=*) out=${1#*=}; shift ;;
        -h|--help) echo "$usage"; exit 0 ;;
        --) shift; break ;;
        *) die_usage "unknown argument '$1' (sweep arguments go after --; $usage)" ;;
    esac
done
sweep_args=("$@")

[[ -n "$out" ]] || die_usage "-o OUT.csv is required ($usage)"
[[ ${#sweep_args[@]} -gt 0 ]] || die_usage "no sweep arguments after -- (a sweep file and/or axis flags; $usage)"
[[ "$tasks" =~ ^[1-9][0-9]*$ ]] || die_usage "--tasks must be a positive integer, not '$tasks'"
[[ "$cpus" =~ ^[1-9][0-9]*$ ]] || die_usage "--cpus must be a positive integer, not '$cpus'"
# sbatch expands %j, %a, ... in --output, and a newline would split the generated scripts.
[[ "$out" != *%* && "$out" != *$'\n'* ]] || die_usage "the output path must not contain '%' or a newline: '$out'"

# This script owns the shard, the resume and the output file of every task; the same options
# among SWEEP-ARGS would fight its own (ringsim keeps the last of a repeated option).
for a in "${sweep_args[@]}"; do
    case "$a" in
        -o|-o*|--output|--output=*|--shard|--shard=*|--resume|--print-grid|-h|--help)
            die_usage "'$a' is set by this script; leave it out of SWEEP-ARGS" ;;
    esac
done

# The jobs run on other nodes, maybe from another directory: every path they see is absolute
# (a shared file system is assumed, as for any Slurm sweep).
if [[ -z "$ringsim" ]]; then
    if command -v ringsim >/dev/null 2>&1; then
        ringsim=$(command -v ringsim)
    else
        ringsim="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/cli/ringsim"
    fi
fi
[[ -f "$ringsim" && -x "$ringsim" ]] || die_usage "no ringsim executable at '$ringsim' (use --ringsim PATH)"
ringsim="$(cd "$(dirname "$ringsim")" && pwd)/$(basename "$ringsim")"

out_dir=$(dirname "$out")
[[ -d "$out_dir" ]] || die_usage "the output's folder '$out_dir' does not exist"
out="$(cd "$out_dir" && pwd)/$(basename "$out")"
[[ ! -d "$out" ]] || die_usage "the output '$out' is a folder"
work="$out.slurm"
[[ ! -e "$work" || -d "$work" ]] || die_usage "'$work' (the jobs' folder) exists and is not a folder"

for tool in sbatch scontrol scancel; do
    command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found: is the Slurm client installed and on PATH?"
done

# Check the sweep here, before anything is queued: a typo in an axis or a missing sweep file
# should fail in a second on this node, not N times on the cluster. (--print-grid reads
# everything a sweep reads and computes nothing.)
if ! check_err=$("$ringsim" sweep "${sweep_args[@]}" --print-grid 2>&1 >/dev/null); then
    die_usage "ringsim rejects the sweep arguments: $(printf '%s\n' "$check_err" | tail -n 1)"
fi

mkdir -p "$work"

# Batch scripts are generated (not `sbatch --wrap`) so that every argument is quoted once,
# with printf %q, and the exact command of each job can be read back in $work.
q() { local a s=""; for a in "$@"; do s+="${s:+ }$(printf '%q' "$a")"; done; printf '%s' "$s"; }
task_script="$work/task.sh"
merge_script="$work/merge.sh"
shard_files=()
for ((k = 1; k <= tasks; k++)); do shard_files+=("$work/shard-$k-of-$tasks.csv"); done

threads=(--threads "$cpus")
for a in "${sweep_args[@]}"; do
    [[ "$a" == --threads || "$a" == --threads=* ]] && threads=()
done

{
    echo '#!/usr/bin/env bash'
    echo "# Generated by scripts/slurm-sweep.sh: shard \$SLURM_ARRAY_TASK_ID+1 of $tasks."
    echo 'set -eu'
    # N is written in, not read from SLURM_ARRAY_TASK_COUNT: the merge lists the same N files.
    # shellcheck disable=SC2016  # expanded by the job, not here
    echo 'k=$((SLURM_ARRAY_TASK_ID + 1))'
    echo "exec $(q "$ringsim" sweep "${sweep_args[@]}" "${threads[@]}") --shard \"\$k/$tasks\" --resume -o $(q "$work/shard-")\"\$k-of-$tasks.csv\""
} > "$task_script"
{
    echo '#!/usr/bin/env bash'
    echo "# Generated by scripts/slurm-sweep.sh: joins the $tasks shards into the unsharded sweep."
    echo 'set -eu'
    echo "exec $(q "$ringsim" merge -o "$out" "${shard_files[@]}")"
} > "$merge_script"
chmod +x "$task_script" "$merge_script"

common=(--parsable --chdir="$PWD" --cpus-per-task="$cpus")
[[ -n "$partition" ]] && common+=(--partition="$partition")
[[ -n "$time_limit" ]] && common+=(--time="$time_limit")
name="ringsim-sweep-$(basename "$out")"

# --parsable prints "jobid" or "jobid;cluster".
array_job=$(sbatch "${common[@]}" --job-name="$name" --array="0-$((tasks - 1))" \
    --output="$work/slurm-%A_%a.out" "$task_script") || die "sbatch refused the array job"
array_job=${array_job%%;*}
[[ "$array_job" =~ ^[0-9]+$ ]] || die "sbatch printed no job id for the array job: '$array_job'"

# --kill-on-invalid-dep: when a task fails, the merge job is cancelled instead of pending
# forever (DependencyNeverSatisfied), so --wait ends and the queue stays clean.
if ! merge_job=$(sbatch "${common[@]}" --job-name="$name-merge" \
        --dependency="afterok:$array_job" --kill-on-invalid-dep=yes \
        --output="$work/slurm-%j.out" "$merge_script"); then
    scancel "$array_job" || true
    die "sbatch refused the merge job; cancelled the array job $array_job"
fi
merge_job=${merge_job%%;*}
[[ "$merge_job" =~ ^[0-9]+$ ]] || die "sbatch printed no job id for the merge job: '$merge_job'"

echo "array job: $array_job ($tasks tasks)"
echo "merge job: $merge_job (afterok:$array_job) -> $out"
echo "logs and shards: $work"

[[ $wait -eq 1 ]] || exit 0

# Poll the controller (not `sbatch --wait`) so that the ids above are printed before the wait
# and the merge job's final state is reported as Slurm names it: COMPLETED, or CANCELLED when
# a task failed (--kill-on-invalid-dep), TIMEOUT, FAILED, ... A finished job stays visible to
# scontrol for MinJobAge (300 s by default), far longer than one poll.
state=""
misses=0
while :; do
    if info=$(scontrol show job -o "$merge_job" 2>/dev/null); then
        misses=0
        state=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$info")
        case "$state" in
            PENDING|CONFIGURING|RUNNING|COMPLETING|SUSPENDED|REQUEUED|REQUEUE_HOLD|REQUEUE_FED|RESIZING|SIGNALING|STAGE_OUT|"") ;;
            *) break ;;
        esac
    else
        # The controller did not answer (or forgot the job): give up only after a minute of that.
        misses=$((misses + 1))
        [[ $misses -lt 60 ]] || die "lost track of merge job $merge_job (scontrol show job fails); see $work"
    fi
    sleep 1
done

if [[ "$state" == COMPLETED && -f "$out" ]]; then
    echo "merge job $merge_job COMPLETED: $out"
    exit 0
fi
echo "$prog: merge job $merge_job ended $state; see the logs in $work" >&2
exit 1
