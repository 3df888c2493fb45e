#!/bin/bash
# run260b: part b of run 260, whose script (both parts) is kept whole as ../run260a/script.sh;
# it ran as `bash dist/run260.sh b` right after part a on the same warm machine.
exec bash "$(dirname "$0")/../run260a/script.sh" b
