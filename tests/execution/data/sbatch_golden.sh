#!/bin/bash
#SBATCH --job-name=xrun-study
#SBATCH --array=0-248%50
#SBATCH --output=/campaign/_outputs/slurm/20250101-120000/logs/%A_%a.out
#SBATCH --chdir=/campaign
#SBATCH --partition=short
#SBATCH --time=2:00:00
#SBATCH --cpus-per-task=2
#SBATCH --mem=4G
#SBATCH --account=proj1
# Written by xrun submit: job array 1, tasks 1001-1249 of 1250, 2 run files per task.
set -euo pipefail

export XRUN_STORE=postgresql+psycopg://xdoe:secret@db.example.org:5432/campaign
TASK_LIST=/campaign/_outputs/slurm/20250101-120000/tasks.tsv
OFFSET=1001
TASK=$((SLURM_ARRAY_TASK_ID + OFFSET))
# line TASK+1 of the task list holds this task's run files, separated by tabs
LINE=$(sed -n "$((TASK + 1))p" "$TASK_LIST")
if [ -z "$LINE" ]; then
  echo "xrun task $TASK: no line $((TASK + 1)) in $TASK_LIST" >&2
  exit 2
fi
IFS=$'\t' read -r -a FILES <<< "$LINE"
echo "xrun task $TASK (array $SLURM_ARRAY_JOB_ID index $SLURM_ARRAY_TASK_ID) on $(hostname): ${#FILES[@]} run file(s)"
/opt/venv/bin/python -m xdoe.cli._xrun experiment-start --store "$XRUN_STORE" --quiet --results /campaign/results --jobs 2 "${FILES[@]}"
