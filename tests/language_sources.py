"""The course's words in each language, as the language tests read them: lesson prose (Markdown
cells), the comments and string literals of code cells, the package's message files and the
READMEs. Code spans, LaTeX, URLs and HTML are removed from prose: they keep their own syntax."""
from __future__ import annotations

import ast
import json
import os
import pathlib
import re

from attnlab.course.glossary import table as glossary_table
from attnlab.course.languages import LESSON_DIRS

ROOT = pathlib.Path(__file__).resolve().parents[1]
# The lessons read: this checkout's, or another worktree's (COURSE_LESSONS_ROOT=/path/to/checkout).
LESSONS_ROOT = pathlib.Path(os.environ.get("COURSE_LESSONS_ROOT", ROOT))
LESSON_DIR = dict(LESSON_DIRS)                     # {"vi": "lessons_vi", "zh": "lessons_zh"}
MESSAGES = ROOT / "shared" / "attnlab" / "messages"
README_PARAGRAPH = {"vi": "**Tiếng Việt.**", "zh": "**中文。**"}

_STRIP = [
    re.compile(r"```.*?```", re.S),            # fenced code
    re.compile(r"`[^`\n]*`"),                   # inline code
    re.compile(r"\$\$.*?\$\$", re.S),           # display LaTeX
    re.compile(r"(?<!\\)\$[^$\n]+\$"),          # inline LaTeX
    re.compile(r"\]\([^)\s]*\)"),               # link targets
    re.compile(r"https?://\S+"),                # bare URLs
    re.compile(r"<!--.*?-->", re.S),            # HTML comments
    re.compile(r"<[^>\n]+>"),                   # HTML tags and their attributes
]


# A short ASCII literal in quotes is code, not a quotation: answer "A", token '|'.
_CODE_LITERAL = re.compile(r"""(["'])[!#-&(-~]{1,12}\1""")


def prose(markdown: str) -> str:
    """``markdown`` without code spans, LaTeX, URLs, HTML and short quoted code literals."""
    for pattern in _STRIP + [_CODE_LITERAL]:
        # a code span becomes "∎": no letters, no digits, no space (so "`x` ——" still shows its space)
        markdown = pattern.sub(lambda m: "]" if m.group(0).startswith("](") else "∎", markdown)
    return markdown


def _src(cell) -> str:
    s = cell["source"]
    return "".join(s) if isinstance(s, list) else s


def string_literals(code: str) -> list[str]:
    """The str constants of ``code`` and the literal parts of its f-strings (not format specs),
    those with a non-ASCII letter: the words a reader sees, not keys or code."""
    out: list[str] = []

    def visit(node):
        if isinstance(node, ast.JoinedStr):
            out.extend(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
            for v in node.values:
                if isinstance(v, ast.FormattedValue):
                    visit(v.value)
            return
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(node.value)
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(code))
    return [s for s in out if not s.isascii()]


def comments(code: str) -> list[str]:
    import io
    import tokenize
    return [tok.string[1:] for tok in tokenize.generate_tokens(io.StringIO(code).readline)
            if tok.type == tokenize.COMMENT]


def lesson_paths(lang: str) -> list[pathlib.Path]:
    return sorted((LESSONS_ROOT / LESSON_DIR[lang]).glob("*.ipynb"))


def lesson_texts(lang: str, with_comments: bool = False) -> list[tuple[str, str]]:
    """(where, text) for every Markdown cell (as prose), printed string and, if asked, comment."""
    out = []
    for path in lesson_paths(lang):
        nb = json.loads(path.read_text(encoding="utf-8"))
        for i, cell in enumerate(nb["cells"]):
            where = f"{path.parent.name}/{path.name} cell {i}"
            if cell["cell_type"] == "markdown":
                out.append((where, prose(_src(cell))))
            elif cell["cell_type"] == "code":
                out += [(where + " string", s) for s in string_literals(_src(cell))]
                if with_comments:
                    out += [(where + " comment", c) for c in comments(_src(cell))]
    return out


def message_texts(lang: str) -> list[tuple[str, str]]:
    out = []
    for path in sorted(MESSAGES.glob("*.json")):
        for key, texts in json.loads(path.read_text(encoding="utf-8")).items():
            # {fields} are names for the code, not words: "{loss}" is not the word loss
            out.append((f"messages/{path.name} {key}", prose(re.sub(r"\{[^{}]*\}", "{}", texts[lang]))))
    return out


def readme_texts(lang: str) -> list[tuple[str, str]]:
    main = (ROOT / "README.md").read_text(encoding="utf-8")
    paragraphs = [p for p in main.split("\n\n") if p.startswith(README_PARAGRAPH[lang])]
    own = (LESSONS_ROOT / LESSON_DIR[lang] / "README.md").read_text(encoding="utf-8")
    own = own.replace(glossary_table(lang), "")        # its English column names the English terms
    # The tables keep their Markdown syntax (the |---| rows are not prose).
    own = "\n".join(line for line in own.splitlines() if not re.fullmatch(r"\|[-| ]+\|", line))
    return [("README.md", prose(p)) for p in paragraphs] + [(f"{LESSON_DIR[lang]}/README.md", prose(own))]


def all_texts(lang: str, with_comments: bool = False) -> list[tuple[str, str]]:
    return lesson_texts(lang, with_comments) + message_texts(lang) + readme_texts(lang)


# --------------------------------------------------------------------------- Markdown as CommonMark renders it
def markdown_sources() -> list[tuple[str, str]]:
    """(where, Markdown source) for every Markdown cell of the lessons and the explorer notebook and
    every README of the repository, as written (not stripped)."""
    out = []
    notebooks = [p for lang in LESSON_DIR for p in lesson_paths(lang)]
    notebooks += sorted((ROOT / "notebooks").glob("*.ipynb"))
    for path in notebooks:
        nb = json.loads(path.read_text(encoding="utf-8"))
        for i, cell in enumerate(nb["cells"]):
            if cell["cell_type"] == "markdown":
                out.append((f"{path.parent.name}/{path.name} cell {i}", _src(cell)))
    for path in sorted(ROOT.glob("**/README.md")):
        if not any(part.startswith(".") or part == "node_modules" for part in path.relative_to(ROOT).parts):
            out.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
    return out


_LATEX = [re.compile(r"\$\$.*?\$\$", re.S), re.compile(r"(?<![\\$])\$(?!\$)(?:[^$\n\\]|\\.)+?\$")]


def latex_spans(markdown: str) -> list[str]:
    """The LaTeX of ``markdown`` ($…$ and $$…$$), outside code spans and fences."""
    text = re.sub(r"```.*?```|`[^`\n]*`", " ", markdown, flags=re.S)
    spans = []
    for pattern in _LATEX:
        spans += pattern.findall(text)
        text = pattern.sub(" ", text)
    return spans


def _without_latex(markdown: str) -> str:
    # Jupyter, GitHub and the website read $…$ as math before Markdown: its * and _ are not emphasis.
    # Code spans stay as they are (markdown-it reads them); LaTeX becomes a letter.
    pieces = re.split(r"(```.*?```|`[^`\n]*`)", markdown, flags=re.S)
    for k in range(0, len(pieces), 2):
        for pattern in _LATEX:
            pieces[k] = pattern.sub("X", pieces[k])
    return "".join(pieces)


def rendered_inline(markdown: str):
    """The inline tokens of ``markdown`` as CommonMark (markdown-it-py, with GitHub's tables) parses
    it: one list of child tokens per paragraph, heading or table cell."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").enable("table")
    return [tok.children or [] for tok in md.parse(_without_latex(markdown)) if tok.type == "inline"]


_CJK = r"\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef“”‘’—…·"
# A delimiter that CommonMark left as text: any * not between two spaces ("a * b" is a plain
# asterisk), a run of _ at a word's edge (snake_case stays as it is).
_LITERAL_DELIMITER = re.compile(r"(?<!\s)\*+|\*+(?!\s)|(?<![\w])_+(?=[^\s_])|(?<=[^\s_])_+(?![\w])")
_CJK_BREAK = re.compile(f"[{_CJK}]$"), re.compile(f"^[{_CJK}]")


def literal_delimiters(markdown: str) -> list[str]:
    """The emphasis delimiters (* or _) of ``markdown`` that CommonMark renders as literal characters.
    In Chinese the cause is a delimiter between full-width punctuation and a Chinese character: it can
    neither open nor close on that side (**“逐位置”**的), so it stays literal, or pairs with a later
    delimiter and leaves another one literal (**预热（warm-up）**就 … **不会…**)."""
    found = []
    for children in rendered_inline(markdown):
        depth = {"strong": 0, "em": 0}
        for k, tok in enumerate(children):
            if tok.type == "text":
                found += [tok.content[max(0, m.start() - 12):m.end() + 12]
                          for m in _LITERAL_DELIMITER.finditer(tok.content)]
            kind, _, side = tok.type.partition("_")
            if kind in depth and side in ("open", "close"):
                depth[kind] += 1 if side == "open" else -1
                if depth[kind] > 1:           # bold inside bold: a closer that could not close
                    text = "".join(c.content for c in children[k + 1:k + 3] if c.type == "text")
                    found.append(f"{tok.markup} opened twice before “{text[:20]}”")
    return found


def cjk_soft_breaks(markdown: str) -> list[str]:
    """Soft line breaks between two CJK characters (or CJK punctuation) in ``markdown``: browsers render
    them as a space (“越南语或 中文”)."""
    found = []
    for children in rendered_inline(markdown):
        for before, brk, after in zip(children, children[1:], children[2:]):
            if brk.type == "softbreak" and before.type == "text" and after.type == "text" \
                    and _CJK_BREAK[0].search(before.content) and _CJK_BREAK[1].search(after.content):
                found.append(before.content[-12:] + "⏎" + after.content[:12])
    return found
