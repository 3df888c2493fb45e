#!/bin/bash
# run271b: part b of run 271, whose script (both parts) is kept whole as ../run271a/script.sh;
# it ran as `bash dist/run271.sh b` on the same warm machine as part a.
exec bash "$(dirname "$0")/../run271a/script.sh" b
