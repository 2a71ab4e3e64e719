package io.pgsink.core.error;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class FailureEpisodeTest
{
    @Test
    void failuresInARowWaitLongerUntilASuccessStartsOver()
    {
        FailureEpisode episode = new FailureEpisode(Backoff.upTo(4_000));
        assertThat(episode.failed()).isEqualTo(500);
        assertThat(episode.failed()).isEqualTo(1_000);
        assertThat(episode.failed()).isEqualTo(2_000);
        assertThat(episode.failed()).isEqualTo(4_000);
        assertThat(episode.failed()).isEqualTo(4_000);
        assertThat(episode.failures()).isEqualTo(5);

        episode.succeeded();
        assertThat(episode.failures()).isZero();
        assertThat(episode.failed()).isEqualTo(500);
        assertThat(episode.failures()).isEqualTo(1);
    }
}
