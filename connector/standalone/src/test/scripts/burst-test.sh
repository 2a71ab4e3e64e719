#!/usr/bin/env bash
# Runs the memory test (BurstMemoryIT) with a bigger burst: one source transaction updates every row
# of a table of ~0.5 KB rows while the service runs as its own JVM with buffer.max.bytes=16MiB and
# -Xmx192m; the burst must be applied exactly and the live heap after every full GC must stay within
# 3 x buffer.max.bytes + 64 MiB. CI runs 300,000 rows.
#
#   connector/standalone/src/test/scripts/burst-test.sh              # 5,000,000 rows
#   connector/standalone/src/test/scripts/burst-test.sh 1000000      # another count
#
# The 5M version needs about 15 GB of disk on the PostgreSQL server (source and target tables, WAL
# of the bulk update) and takes tens of minutes on a small machine.
set -euo pipefail
cd "$(dirname "$0")/../../../../.."

rows="${1:-5000000}"

./mvnw -pl connector/standalone -am verify \
  -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test=BurstMemoryIT -Dfailsafe.failIfNoSpecifiedTests=false \
  -Dpgsink.burst.rows="$rows"
