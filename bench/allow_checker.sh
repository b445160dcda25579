#!/bin/sh
# Shell variant of bench/allow_checker.c (used when no C compiler is found): reads the prompt,
# replies with one fenced allow verdict.
cat >/dev/null
printf '%s\n' 'Nothing to object to.' '' '```json' \
  '{"verdict": "allow", "summary": "bench allow", "findings": []}' '```'
