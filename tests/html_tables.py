"""A strict reading of notebook HTML (``_repr_html_``) for the tests: every
tag closed in order, and the text of the caption, header cells, cells and
paragraphs."""

from __future__ import annotations

from html.parser import HTMLParser


class HtmlTable(HTMLParser):
    """Every start tag closed in order (no void tags are written); the text
    of the (last) table's caption, header cells and cells, row by row, and
    of every paragraph."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.caption = ""
        self.headers: list[str] = []
        self.rows: list[list[str]] = []
        self.paragraphs: list[str] = []
        self.text = ""

    def handle_starttag(self, tag, attrs) -> None:
        self.open.append(tag)
        self.text = ""
        if tag == "tr" and "tbody" in self.open:
            self.rows.append([])

    def handle_endtag(self, tag) -> None:
        assert self.open and self.open.pop() == tag, f"</{tag}> closes nothing open"
        if tag == "caption":
            self.caption = self.text
        elif tag == "th":
            self.headers.append(self.text)
        elif tag == "td":
            self.rows[-1].append(self.text)
        elif tag == "p":
            self.paragraphs.append(self.text)

    def handle_data(self, data) -> None:
        self.text += data


def parse_html(text: str) -> HtmlTable:
    """``text`` read by :class:`HtmlTable`; fails on a tag left open."""
    parser = HtmlTable()
    parser.feed(text)
    parser.close()
    assert parser.open == [], f"unclosed: {parser.open}"
    return parser
