"""helpers.tables: a Markdown table stays one table whatever its cells and header hold."""

from helpers.tables import table


def test_a_pipe_in_the_header_or_a_cell_does_not_break_the_markdown_table() -> None:
    markdown = table(["stride", "median |error|"], [[1, "a|b"]])._repr_markdown_()
    header, rule, row = markdown.splitlines()
    assert header == "| stride | median \\|error\\| |" and rule == "|---|---|"
    assert row == "| 1 | a\\|b |"
    assert all(line.replace("\\|", "").count("|") == 3 for line in (header, row))
