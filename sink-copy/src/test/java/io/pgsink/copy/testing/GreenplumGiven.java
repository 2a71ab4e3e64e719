package io.pgsink.copy.testing;

import org.junit.jupiter.api.condition.EnabledIf;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a test class only where {@link TestingGreenplum#URL_ENVIRONMENT_VARIABLE} names a Greenplum
 * coordinator; elsewhere it is skipped with {@link TestingGreenplum#NOT_GIVEN} as the reason.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@EnabledIf(value = "io.pgsink.copy.testing.TestingGreenplum#given", disabledReason = TestingGreenplum.NOT_GIVEN)
public @interface GreenplumGiven {}
