package io.pgsink.reference;

/** Text as it may stand in a cell of a Markdown table. */
final class Markdown
{
    private Markdown()
    {
    }

    /** {@code text} in a table cell: no pipe, tag or emphasis read into it, on one line. */
    static String cell(String text)
    {
        return text.replace("\\", "\\\\")
                .replace("|", "\\|")
                .replace("<", "&lt;")
                .replace("*", "\\*")
                .replace("\n", " ");
    }

    /** {@code text} as inline code in a table cell (a pipe still needs its escape there). */
    static String code(String text)
    {
        return "`" + text.replace("|", "\\|") + "`";
    }
}
