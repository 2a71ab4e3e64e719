#!/usr/bin/env bash
# Runs the crash test (CrashRecoveryIT) with many SIGKILLs: the service runs as its own JVM while a
# workload changes the source, is killed with SIGKILL at random moments and restarted, and at the end
# the target must equal the source.
#
#   connector/standalone/src/test/scripts/crash-test.sh            # 50 kills
#   connector/standalone/src/test/scripts/crash-test.sh 200        # 200 kills
#   PGSINK_CRASH_SEED=1234 connector/standalone/src/test/scripts/crash-test.sh 50   # replay a run
#
# Runs against the integration tests' PostgreSQL: PGSINK_TEST_JDBC_URL when set (wal_level=logical),
# otherwise an embedded one the test starts.
set -euo pipefail
cd "$(dirname "$0")/../../../../.."

kills="${1:-50}"
seed_option=()
if [ -n "${PGSINK_CRASH_SEED:-}" ]; then
  seed_option=("-Dpgsink.crash.seed=$PGSINK_CRASH_SEED")
fi

./mvnw -pl connector/standalone -am verify \
  -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test=CrashRecoveryIT -Dfailsafe.failIfNoSpecifiedTests=false \
  -Dpgsink.crash.kills="$kills" "${seed_option[@]}"
