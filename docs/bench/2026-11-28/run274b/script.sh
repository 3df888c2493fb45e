#!/bin/bash
# run274b: part b of run 274, whose script (both parts) is kept whole as ../run274a/script.sh;
# it ran as `bash dist/run274.sh b` on the same warm machine as part a.
exec bash "$(dirname "$0")/../run274a/script.sh" b
