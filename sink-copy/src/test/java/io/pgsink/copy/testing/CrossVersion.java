package io.pgsink.copy.testing;

import org.junit.jupiter.api.ClassTemplate;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.AfterClassTemplateInvocationCallback;
import org.junit.jupiter.api.extension.BeforeClassTemplateInvocationCallback;
import org.junit.jupiter.api.extension.ClassTemplateInvocationContext;
import org.junit.jupiter.api.extension.ClassTemplateInvocationContextProvider;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.Extension;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.commons.support.AnnotationSupport;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.List;
import java.util.stream.Stream;

/**
 * Runs every test of the annotated class once per PostgreSQL version pair of
 * {@link PostgresVersionPair#pairs()}, with {@link TestingPostgreSqlServer#source()} and
 * {@link TestingPostgreSqlServer#target()} answering that pair's servers meanwhile: a cross-version
 * suite class is an existing IT's subclass with this annotation and nothing else to say. A
 * {@link #matrixOnly()} class runs only when {@value PostgresVersionPair#MATRIX_PROPERTY} is set,
 * which keeps what {@code ./mvnw verify} adds to CI to a few minutes.
 *
 * <p>The class must set up its databases in {@code @BeforeEach}: JUnit runs a class template's
 * {@code @BeforeAll} once, before any pair is pinned, so a {@code PER_CLASS} class is refused.
 * The pair is pinned for the JVM while a class runs, so cross-version classes must not run in
 * parallel with other tests of the JVM (JUnit runs them one after another unless told otherwise).
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@ClassTemplate
@ExtendWith(CrossVersion.Pairs.class)
public @interface CrossVersion
{
    /** Whether the class runs only for an explicit {@value PostgresVersionPair#MATRIX_PROPERTY}, not in every build. */
    boolean matrixOnly() default false;

    /** The invocations of a {@link CrossVersion} class, one per pair. */
    final class Pairs
            implements ClassTemplateInvocationContextProvider
    {
        @Override
        public boolean supportsClassTemplate(ExtensionContext context)
        {
            return AnnotationSupport.isAnnotated(context.getRequiredTestClass(), CrossVersion.class);
        }

        @Override
        public Stream<ClassTemplateInvocationContext> provideClassTemplateInvocationContexts(ExtensionContext context)
        {
            if (context.getTestInstanceLifecycle().filter(TestInstance.Lifecycle.PER_CLASS::equals).isPresent()) {
                // JUnit runs a class template's @BeforeAll once, before any pair is pinned
                throw new IllegalStateException(context.getRequiredTestClass().getName()
                        + " has @TestInstance(PER_CLASS), whose @BeforeAll would run once on the default servers"
                        + " rather than once per version pair: set up in @BeforeEach instead");
            }
            boolean matrixOnly = AnnotationSupport.findAnnotation(context.getRequiredTestClass(), CrossVersion.class)
                    .map(CrossVersion::matrixOnly)
                    .orElse(false);
            if (matrixOnly && System.getProperty(PostgresVersionPair.MATRIX_PROPERTY, "").isBlank()) {
                return Stream.empty();
            }
            return PostgresVersionPair.pairs().stream().map(Invocation::new);
        }

        @Override
        public boolean mayReturnZeroClassTemplateInvocationContexts(ExtensionContext context)
        {
            return true;
        }
    }

    /** One pair's run: pins the pair before the class's tests and unpins it after them. */
    record Invocation(PostgresVersionPair pair)
            implements ClassTemplateInvocationContext
    {
        @Override
        public String getDisplayName(int invocationIndex)
        {
            return pair.toString();
        }

        @Override
        public List<Extension> getAdditionalExtensions()
        {
            BeforeClassTemplateInvocationCallback pin = context -> TestingPostgreSqlServer.pin(pair);
            AfterClassTemplateInvocationCallback unpin = context -> TestingPostgreSqlServer.unpin();
            return List.of(pin, unpin);
        }
    }
}
