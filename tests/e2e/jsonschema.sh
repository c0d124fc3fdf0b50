#!/bin/sh
# jsonschema.sh - every verb's --json output is one document of the shape
# its schema under tests/json says, with hopscope-json(7)'s names and types
# (tests/e2e/jsoncheck.py)
: "${top_srcdir:=.}" "${top_builddir:=.}"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is missing"; exit 77; }
python3 -c 'import jsonschema' 2>/dev/null ||
	{ echo "SKIP: python3-jsonschema is missing"; exit 77; }
export top_srcdir top_builddir
exec python3 "$top_srcdir/tests/e2e/jsoncheck.py"
