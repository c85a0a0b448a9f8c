"""helpers.tables: a Markdown table stays one table whatever its cells and header hold."""

from helpers.tables import table


def test_a_pipe_in_the_header_or_a_cell_does_not_break_the_markdown_table() -> None:
    markdown = table(["stride", "median |error|"], [[1, "a|b"]])._repr_markdown_()
    header, rule, row = markdown.splitlines()
    assert header == "| stride | median \\|error\\| |" and rule == "|---|---|"
    assert row == "| 1 | a\\|b |"
    assert all(line.replace("\\|", "").count("|") == 3 for line in (header, row))


def test_the_book_counts_the_tables_a_lesson_shows(tmp_path):
    """helpers.tools.book refuses a site that lost a lesson's tables (issue 21: the rendered book shows every table)."""
    import nbformat

    from helpers.tables import table
    from helpers.tools import book

    shown = table(["a", "b"], [[1, 2]], caption="*a caption*")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("t", outputs=[nbformat.v4.new_output(
        "display_data", data={"text/markdown": shown._repr_markdown_(), "text/plain": str(shown)})])])
    assert book.markdown_tables(nb) == 1
    page = tmp_path / "page.html"
    page.write_text("<p>| a | b |</p>")
    assert book.html_tables(page) == 0
    page.write_text("<table class='table'><tr><td>1</td></tr></table>")
    assert book.html_tables(page) == 1


def test_no_table_header_shows_a_raw_field_name():
    """Issue 33: lessons 04, 10 and 13 showed `useful_GBps` as a header. A record's field names reach a table as
    words with their unit; Nsight Compute's counter names (two underscores) are kept, as the lessons name them."""
    import re

    from helpers import experiments, records
    from helpers.tables import column_name

    assert column_name("useful_GBps") == "useful (GB/s)"
    assert column_name("offset_floats", "median of 9") == "offset (floats, median of 9)"
    assert column_name("cpu_GBps_alone") == "CPU alone (GB/s)"
    assert column_name("lts__t_sectors_op_read") == "lts__t_sectors_op_read"
    raw = re.compile(r"^[a-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b")
    record, _ = records.reference_record()
    for name in record["experiments"]:
        result = experiments.reference(name)
        if not result.rows:
            continue
        header = result.table().header
        assert not [h for h in header if raw.match(h)], f"{name}: raw field names in {header}"
