#!/usr/bin/env bash
# A batch of steps on the GPU machine (see ../shared/device/README.md), read from a table:
#     bash scripts/gpu_batch.sh FAMILY        e.g. STEPS="tests suites" SUITES=ils bash ... localsearch
# FAMILY names scripts/gpu/FAMILY.steps (foundation, localsearch, neighborhood, mmas, acs,
# acs_large, acs_reads, ga, many); its heading comment says what the batch does and which
# settings its steps read from the environment.  Run from the project root with .whl and
# .bench (a copy of ../shared/instances under .bench/instances) carried along;
# scripts/device_prelude.sh installs the wheels and defines step and run_suite; results
# land in $OUT, the log in $OUT/FAMILY.log.
#
# A table is plain text, one entry a line (a line ending in \ goes on on the next line;
# blank lines and lines starting with # are skipped):
#     NAME=VALUE                  a shell variable for the lines below
#     STEP | HEADING | COMMAND    a step: HEADING logged, then COMMAND run by bash, its
#                                 stdout and stderr shown and appended to the log
# Every step runs unless STEPS lists the steps to run ("tests table2"; lines may share a
# step name) or SKIP lists steps to leave out; a name ending in ? runs only when STEPS
# names it.  COMMAND may call `step` for a sub-heading, `suites DEFAULT TIMEOUT` (below)
# and the functions of scripts/gpu/FAMILY.sh, sourced first where it exists.  T and V
# name the carried TSPLIB and VLSI instance folders.
set -uo pipefail
family=${1:?usage: bash scripts/gpu_batch.sh FAMILY (a table scripts/gpu/FAMILY.steps)}
table=scripts/gpu/$family.steps
[ -f "$table" ] || { echo "gpu_batch: no table $table" >&2; exit 2; }
. scripts/device_prelude.sh "$family"
T=.bench/instances/tsplib
V=.bench/instances/vlsi
if [ -f "scripts/gpu/$family.sh" ]; then . "scripts/gpu/$family.sh"; fi

suites() {   # DEFAULT TIMEOUT: run_suite each suite of $SUITES (unset: DEFAULT) for TIMEOUT s
  local suite
  for suite in ${SUITES-$1}; do run_suite "$suite" "${SUITE_TIMEOUT:-$2}"; done
}

wanted() {   # NAME: whether the step runs (see above)
  local name=${1%\?}
  if [ -n "${STEPS+set}" ]; then
    [[ " $STEPS " == *" $name "* ]] || return 1
  else
    [ "$name" = "$1" ] || return 1
  fi
  [[ " ${SKIP-} " != *" $name "* ]]
}

entry=""
while IFS= read -r line <&3 || [ -n "$line" ]; do
  if [[ $line == *\\ ]]; then entry+="${line%\\}"; continue; fi
  entry+=$line
  text=$entry entry=""
  [[ $text =~ ^[[:space:]]*(#|$) ]] && continue
  if [[ $text != *" | "* ]]; then
    if [[ $text =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; then eval "$text"; continue; fi
    echo "gpu_batch: $table: not NAME=VALUE nor STEP | HEADING | COMMAND: $text" >&2
    exit 2
  fi
  name=${text%% | *} rest=${text#* | }
  heading=${rest%% | *} command=${rest#* | }
  wanted "$name" || continue
  eval "step \"$heading\""
  # the command's lines reach the log once, through this tee (nested tees go to /dev/null)
  (LOG=/dev/null; eval "$command") < /dev/null 2>&1 | tee -a "$LOG"
done 3< "$table"
step done
