#!/usr/bin/env bash
# Runs the crash test (CrashRecoveryIT) with many SIGKILLs: the service runs as its own JVM while a
# workload changes the source, is killed with SIGKILL at random moments and restarted, and at the end
# the target must equal the source.
#
#   connector/src/test/scripts/crash-test.sh            # 50 kills
#   connector/src/test/scripts/crash-test.sh 200        # 200 kills
#   PGSINK_CRASH_SEED=1234 connector/src/test/scripts/crash-test.sh 50   # replay a run
#
# Needs the PostgreSQL of the integration tests (wal_level=logical); PGSINK_TEST_JDBC_URL defaults to
# the local one CI uses.
set -euo pipefail
cd "$(dirname "$0")/../../../.."

kills="${1:-50}"
export PGSINK_TEST_JDBC_URL="${PGSINK_TEST_JDBC_URL:-jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres}"
seed_option=()
if [ -n "${PGSINK_CRASH_SEED:-}" ]; then
  seed_option=("-Dpgsink.crash.seed=$PGSINK_CRASH_SEED")
fi

./mvnw -pl connector -am verify \
  -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test=CrashRecoveryIT -Dfailsafe.failIfNoSpecifiedTests=false \
  -Dpgsink.crash.kills="$kills" "${seed_option[@]}"
