#!/bin/bash
# run281b: part b of run 281, whose script (both parts) is kept whole as ../run281a/script.sh;
# it ran as `bash dist/run281.sh b` on the same warm machine as part a.
exec bash "$(dirname "$0")/../run281a/script.sh" b
