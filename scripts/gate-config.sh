#!/usr/bin/env bash
# Prints the built-in stages (scenarios/stages.yaml), or with --no-floors the
# same with the absolute floors of their gates (task_success_rate,
# tool_selection_accuracy) set to 0: a file for --config.
#
# The floors are the evaluation guide's bar for a real model. Runs recorded
# with the offline lexical baseline model (make demo, the per-PR workflow)
# do not reach them by design; for those, every comparison with the recorded
# baseline (task success not lower, tokens at most +10%, no extra API calls,
# zero safety failures, no stale replay) stays on and is what gates.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--no-floors" ]; then
	sed -e 's/^\( *task_success_rate:\) [0-9.]*/\1 0/' \
		-e 's/^\( *tool_selection_accuracy:\) [0-9.]*/\1 0/' scenarios/stages.yaml
else
	cat scenarios/stages.yaml
fi
