#!/usr/bin/env bash
# One-off repo-wide format, run by the lead on main after every branch has merged (a repo-wide reformat on a
# branch would conflict with everyone): prettier --write, then eslint --fix (type imports and the like), then
# the same checks CI runs. Exits non-zero, with eslint's findings, when something still needs a hand fix.
set -euo pipefail
cd "$(dirname "$0")/.."

echo '[format-all] prettier --write'
npx prettier --write --log-level warn '**/*.{ts,tsx,js,mjs}'
echo '[format-all] eslint --fix'
npx eslint --fix . || true # what autofix cannot fix is reported by the lint step below
echo '[format-all] prettier again (eslint --fix may have rewritten imports)'
npx prettier --write --log-level warn '**/*.{ts,tsx,js,mjs}'
echo '[format-all] npm run lint'
npm run lint --silent
echo '[format-all] npm run typecheck'
npm run typecheck --silent
echo '[format-all] clean: commit with  git add -A && git commit -m "format: prettier + eslint --fix over the repository"'
