package io.pgsink.core.error;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BackoffTest
{
    @Test
    void startsAt500MillisAndDoublesUpToTheMaximum()
    {
        Backoff backoff = Backoff.upTo(30_000);
        assertThat(backoff.delayMillis(0)).isEqualTo(500);
        assertThat(backoff.delayMillis(1)).isEqualTo(1000);
        assertThat(backoff.delayMillis(5)).isEqualTo(16_000);
        assertThat(backoff.delayMillis(6)).isEqualTo(30_000);
        assertThat(backoff.delayMillis(Integer.MAX_VALUE)).isEqualTo(30_000);
        // a maximum below the first wait caps it
        assertThat(Backoff.upTo(100).delayMillis(0)).isEqualTo(100);
        // no overflow on the way to a huge maximum
        assertThat(Backoff.upTo(Long.MAX_VALUE).delayMillis(100)).isEqualTo(Long.MAX_VALUE);
        assertThat(Backoff.upTo(Long.MAX_VALUE).delayMillis(40)).isEqualTo(500L << 40);
    }

    @Test
    void refusesWaitsThatAreNotPositive()
    {
        assertThatThrownBy(() -> new Backoff(0, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Backoff.upTo(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
