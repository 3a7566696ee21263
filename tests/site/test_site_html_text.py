"""Recipe text in a page's raw HTML (formatting.html_text): escaped as HTML, no fence or heading for Python-Markdown to
find, no control character; text with nothing to escape comes back as it was (the renderer's fast path)."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.site import formatting as fmt


def _spelled_out(text: str) -> str:
    """What html_text promises, step by step."""
    text = re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", "", text)
    text = html.escape(text, quote=True).replace("`", "&#96;").replace("~", "&#126;")
    return re.sub(r"^#", "&#35;", text, flags=re.M)


@pytest.mark.parametrize(("text", "expected"), [
    ("Llama-3.1-405B on 1,024 H100", "Llama-3.1-405B on 1,024 H100"),
    ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
    ("a\n# heading", "a\n&#35; heading"),
    ("a # not at a line's start", "a # not at a line's start".replace("'", "&#x27;")),
    ("```\ncode", "&#96;&#96;&#96;\ncode"),
    ("~~~", "&#126;&#126;&#126;"),
    ("x\x02y\x03z\x7f", "xyz"),
    ('"quoted" & done', "&quot;quoted&quot; &amp; done"),
])
def test_cases(text: str, expected: str) -> None:
    assert fmt.html_text(text) == expected


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab 1.,\n\r\t#`~<>&\"'\x00\x02\x03\x1f\x7f\u00b7é")), max_size=16))
def test_any_text_is_escaped_as_spelled_out(text: str) -> None:
    assert fmt.html_text(text) == _spelled_out(text)
