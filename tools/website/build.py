"""Build the course website from the notebooks' stored outputs (nothing is re-executed).

    python tools/website/build.py [--out build/site]

Fully offline: Markdown via mistune, LaTeX -> MathML at build time via latex2mathml (browsers
render MathML natively: no MathJax/KaTeX, no CDN), code highlighting via Pygments, the Chinese
web font subset from the bundled OFL font via fontTools. The site works from any static file
server (and from file://): the search index is a script, not a fetched JSON file.
"""
from __future__ import annotations

import argparse
import base64
import html
import importlib
import importlib.util
import json
import posixpath
import re
import shutil
import struct
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
import mistune
import nbformat
from latex2mathml.converter import convert as latex_to_mathml
from markupsafe import Markup, escape
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer, get_lexer_by_name
from pygments.util import ClassNotFound

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
from attnlab.course.languages import COURSE_LANGUAGES as LANGS, HTML_LANG  # noqa: E402  (the one source)
FONT_FAMILY = "Noto Sans SC AttnLab"
FONT_SOURCE = ROOT / "shared" / "attnlab" / "fonts" / "NotoSansSC-AttnLab-Subset.ttf"
FONT_LICENSE = ROOT / "shared" / "attnlab" / "fonts" / "OFL.txt"
PYGMENTS_STYLE = "default"

# Exercise sections: a heading whose text starts with one of these words opens one; it ends at
# the next heading of the same or a higher level. Code cells that call attnlab.exercises are
# exercises wherever they are.
EXERCISE_HEADING = re.compile(r"^\s*(exercises?|bài tập|练习|習題)(?![^\W\d_])", re.IGNORECASE)
EXERCISE_CALL = re.compile(r"\battnlab\.exercises\b|\bfrom\s+attnlab\.exercises\b|\bfrom\s+attnlab\s+import\s+exercises\b")
EXPLORER_CALL = re.compile(r"\b(explore|AttentionExplorer)\s*\(")
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]")
VI_LETTERS = re.compile(r"[ăâđêôơưĂÂĐÊÔƠƯàáảãạằắẳẵặầấẩẫậèéẻẽẹềếểễệìíỉĩịòóỏõọồốổỗộờớởỡợùúủũụừứửữựỳýỷỹỵ]", re.IGNORECASE)


# ----------------------------------------------------------------------------- course data

def _load_module(name: str):
    """attnlab.<name> (``course.glossary``) loaded from its file (no torch import); the package import as fallback."""
    path = ROOT / "shared" / "attnlab" / (name.replace(".", "/") + ".py")
    if not path.is_file():
        path = path.with_suffix("") / "__init__.py"
    try:
        spec = importlib.util.spec_from_file_location(f"_attnlab_site_{name.replace('.', '_')}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return module
    except Exception:      # e.g. relative imports: import the package from this checkout instead
        sys.path.insert(0, str(ROOT / "shared"))
        return importlib.import_module(f"attnlab.{name}")


def load_ui() -> dict:
    return json.loads((HERE / "ui.json").read_text(encoding="utf-8"))


def exercise_flags(cells) -> list[bool]:
    """Per cell: is it part of an exercise? (the rule is in EXERCISE_HEADING / EXERCISE_CALL)."""
    flags, open_level = [], None
    for cell in cells:
        src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            for line in src.splitlines():
                m = re.match(r"^(#{1,6})\s+(.*)", line)
                if not m:
                    continue
                level = len(m.group(1))
                if open_level is not None and level <= open_level:
                    open_level = None
                if open_level is None and level >= 2 and EXERCISE_HEADING.match(m.group(2)):
                    open_level = level
        flags.append(open_level is not None or (cell["cell_type"] == "code" and bool(EXERCISE_CALL.search(src))))
    return flags


def text_lang(text: str) -> str:
    if CJK.search(text):
        return "zh"
    if VI_LETTERS.search(text):
        return "vi"
    return "en"


def fold(text: str) -> str:
    """Search folding, the same as site.js: lower case, no diacritics, đ -> d."""
    import unicodedata
    text = unicodedata.normalize("NFD", text.lower())
    return "".join(c for c in text if not unicodedata.combining(c)).replace("đ", "d")


# ----------------------------------------------------------------------------- links

@dataclass
class Site:
    out: Path
    course: object
    ui: dict
    lessons: list = field(default_factory=list)        # [Lesson]
    pages: dict = field(default_factory=dict)          # output path (posix, relative) -> html
    search_docs: list = field(default_factory=list)
    assets: dict = field(default_factory=dict)         # output path -> bytes

    def t(self, key: str, lang: str, **fields) -> str:
        entry = self.ui[key]
        return (entry.get(lang) or entry["en"]).format(**fields) if fields else (entry.get(lang) or entry["en"])

    def repo_target(self, repo_path: str) -> str | None:
        """Site page for a repository path, or None."""
        repo_path = posixpath.normpath(repo_path)
        if repo_path in ("README.md", "."):
            return "index.html"
        if repo_path in ("LICENSE", "LICENSE-CONTENT", "LICENSE.md", "LICENSE-CONTENT.md"):
            return "license.html"
        if repo_path == "notebooks/attention_explorer.ipynb":
            return "explorer.html"
        for lang in LANGS:
            if repo_path in (f"lessons_{lang}", f"lessons_{lang}/README.md"):
                return f"{lang}/index.html"
            m = re.fullmatch(rf"lessons_{lang}/([^/]+)\.ipynb", repo_path)
            if m and any(l.stem == m.group(1) and lang in l.langs for l in self.lessons):
                return f"{lang}/{m.group(1)}.html"
        return None

    def rewrite(self, url: str, src_dir: str, page: str) -> str:
        """A link found in repository file `src_dir`/..., written into site page `page`."""
        if re.match(r"^[a-z][a-z0-9+.-]*:|^#|^//", url, re.I):
            return url
        path, _, frag = url.partition("#")
        repo_path = posixpath.normpath(posixpath.join(src_dir, path)) if path else None
        if repo_path is None:
            return url
        target = self.repo_target(repo_path)
        if target is None:
            kind = "tree" if (ROOT / repo_path).is_dir() else "blob"
            return f"{self.course.REPO_URL}/{kind}/{self.course.BRANCH}/{repo_path}" + (f"#{frag}" if frag else "")
        return rel(page, target) + (f"#{frag}" if frag else "")


def rel(page: str, target: str) -> str:
    """Relative URL from site page `page` to site path `target`."""
    return posixpath.relpath(target, posixpath.dirname(page) or ".")


# ----------------------------------------------------------------------------- markdown

def render_math(tex: str, display: bool) -> str:
    tex = tex.strip()
    tex = re.sub(r"\\arg(?![a-zA-Z])", r"\\operatorname{arg}", tex)   # latex2mathml lacks \arg
    try:
        out = latex_to_mathml(tex, display="block" if display else "inline")
    except Exception as err:                                            # keep the page readable
        raise ValueError(f"cannot render the formula {tex!r}: {err}") from err
    # Screen readers and copy/paste get the source too.
    return out.replace("<math ", f'<math alttext="{html.escape(tex, quote=True)}" ', 1)


def highlight_code(code: str, lang: str = "python") -> str:
    try:
        lexer = get_lexer_by_name(lang or "python")
    except ClassNotFound:
        lexer = PythonLexer()
    return highlight(code, lexer, HtmlFormatter(nowrap=True))


class PageRenderer(mistune.HTMLRenderer):
    """mistune renderer: MathML math, numbered heading ids, site links, no external images."""

    def __init__(self, site: Site, src_dir: str, page: str, headings: list):
        super().__init__(escape=True)
        self.site, self.src_dir, self.page, self.headings = site, src_dir, page, headings

    def heading(self, text, level, **attrs):
        # the anchor Jupyter gives a heading (its text, spaces -> "-"), so notebook links keep working
        hid = re.sub(r"\s+", "-", strip_tags(text)) or f"s{len(self.headings) + 1}"
        taken = {h[1] for h in self.headings}
        hid = next(c for c in [hid] + [f"{hid}-{i}" for i in range(1, 100)] if c not in taken)
        self.headings.append((level, hid, text))
        return f'<h{level} id="{escape(hid)}">{text}</h{level}>\n'

    def block_math(self, text):
        return f'<div class="math-display">{render_math(text, True)}</div>\n'

    def inline_math(self, text):
        # In a box that scrolls on a phone if the formula is wider than the screen (site.css).
        return f'<span class="math-inline">{render_math(text, False)}</span>'

    def link(self, text, url, title=None):
        url = self.site.rewrite(url, self.src_dir, self.page)
        attrs = f' title="{escape(title)}"' if title else ""
        return f'<a href="{escape(url)}"{attrs}>{text}</a>'

    def image(self, text, url, title=None):
        if re.match(r"^[a-z]+:|^//", url, re.I):       # badges etc.: never load from the internet
            return str(escape(text))
        return super().image(text, url, title)

    def block_code(self, code, info=None):
        lang = (info or "").split()[0] if info else ""
        if lang in ("", "text", "console", "output"):
            return f'<pre class="code"><code>{escape(code)}</code></pre>\n'
        return f'<pre class="code highlight"><code>{highlight_code(code, lang)}</code></pre>\n'


FENCE = re.compile(r"^\s{0,3}(```|~~~)")
PLUS_LINE = re.compile(r"^(\s{0,3})\+(\s)")
LIST_LINE = re.compile(r"^\s*(?:[-+*]|\d+[.)])\s")


def keep_plus_lines(text: str) -> str:
    """A line that starts with "+" inside a paragraph ("a\n+ b" in a formula's prose) stays text:
    Jupyter shows it so, and Markdown would make it a list item. Lists (after a blank line or a
    list line) and fenced code are left alone."""
    lines, fenced = text.split("\n"), False
    for i, line in enumerate(lines):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and i and PLUS_LINE.match(line):
            before = lines[i - 1]
            if before.strip() and not LIST_LINE.match(before) and not FENCE.match(before):
                lines[i] = PLUS_LINE.sub(r"\1\\+\2", line)
    return "\n".join(lines)


def markdown(site: Site, text: str, src_dir: str, page: str, headings: list | None = None) -> str:
    headings = [] if headings is None else headings
    md = mistune.create_markdown(renderer=PageRenderer(site, src_dir, page, headings),
                                 plugins=["math", "table", "strikethrough"])
    out = md(keep_plus_lines(text))
    # Tables scroll in their own box on a phone, not the page.
    return re.sub(r"<table>(.*?)</table>", r'<div class="table-wrap" tabindex="0"><table>\1</table></div>', out, flags=re.S)


BLOCK_TAG = re.compile(r"</?(?:p|div|h[1-6]|li|ul|ol|pre|tr|td|th|table|br|figure|details|summary|section|math)\b[^>]*>")


def strip_tags(fragment: str) -> str:
    """Plain text of an HTML fragment: block tags become spaces, inline tags (and MathML's) vanish."""
    fragment = re.sub(r"<math\b.*?</math>", lambda m: " " + re.sub(r"<[^>]+>", "", m.group(0)) + " ", fragment, flags=re.S)
    fragment = BLOCK_TAG.sub(" ", fragment)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", fragment))).strip()


def tag_mixed_lang(fragment: str) -> str:
    """On trilingual pages: lang= on each paragraph/heading/list item, by its script."""
    def fix(m):
        tag, attrs, body = m.group(1), m.group(2), m.group(3)
        if "lang=" in attrs:
            return m.group(0)
        parts = re.split(r"( · )", body)
        if len(parts) > 1 and len({text_lang(strip_tags(p)) for p in parts[::2]}) > 1:
            body = "".join(p if i % 2 else f'<span lang="{HTML_LANG[text_lang(strip_tags(p))]}">{p}</span>'
                           for i, p in enumerate(parts))
            return f"<{tag}{attrs}>{body}</{tag}>"
        return f'<{tag}{attrs} lang="{HTML_LANG[text_lang(strip_tags(body))]}">{body}</{tag}>'
    return re.sub(r"<(p|li|h[1-6]|td|th)((?:\s[^>]*)?)>(.*?)</\1>", fix, fragment, flags=re.S)


# ----------------------------------------------------------------------------- notebooks

@dataclass
class Lesson:
    stem: str
    langs: list
    titles: dict          # lang -> short title (course map or first heading)
    headings: dict = field(default_factory=dict)

    @property
    def number(self) -> int | None:
        m = re.match(r"(\d+)_", self.stem)
        return int(m.group(1)) if m else None


def first_heading(nb) -> str | None:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = re.search(r"^#\s+(.+)$", cell.source, re.M)
            if m:
                return m.group(1).strip()
    return None


def discover_lessons(course) -> list[Lesson]:
    stems = sorted({p.stem for lang in LANGS for p in (ROOT / f"lessons_{lang}").glob("*.ipynb")})
    lessons = []
    for stem in stems:
        langs = [lang for lang in LANGS if (ROOT / f"lessons_{lang}" / f"{stem}.ipynb").exists()]
        titles = {}
        for lang in langs:
            title = getattr(course, "LESSONS", {}).get(stem, {}).get(lang)
            if not title:
                nb = nbformat.read(ROOT / f"lessons_{lang}" / f"{stem}.ipynb", as_version=4)
                title = first_heading(nb) or stem
                title = re.sub(r"^(Bài\s*\d+\s*[:—–-]\s*|第\s*\d+\s*课\s*[:：—–-]*\s*)", "", title)
            titles[lang] = title
        lessons.append(Lesson(stem, langs, titles))
    return lessons


def lesson_label(site: Site, lesson: Lesson, lang: str) -> str:
    if lesson.number is None:
        return lesson.titles[lang]
    return site.t("lesson_label", lang).format(n=lesson.number) + (": " if lang == "vi" else "：") + lesson.titles[lang]


def png_size(data: bytes) -> tuple[int, int] | None:
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return struct.unpack(">II", data[16:24])
    return None


def is_setup_cell(course, source: str) -> bool:
    return source.strip() == course.SETUP_CELL.strip() or source.startswith("# Setup (the same cell in every notebook)")


def render_output(site: Site, out, ctx: dict) -> str:
    lang, page = ctx["lang"], ctx["page"]
    kind = out.get("output_type")
    if kind == "stream":
        cls = "stderr" if out.get("name") == "stderr" else "stdout"
        return f'<pre class="output {cls}">{escape(ANSI.sub("", out.get("text", "")))}</pre>'
    if kind == "error":
        tb = ANSI.sub("", "\n".join(out.get("traceback", [])) or f"{out.get('ename')}: {out.get('evalue')}")
        return f'<pre class="output error">{escape(tb)}</pre>'
    data = out.get("data", {})
    if WIDGET_MIME in data:
        if page == "explorer.html":            # the trilingual explorer page: point at its own buttons
            notes = "".join(f'<p lang="{HTML_LANG[l]}">{escape(site.t("widget_here", l))}</p>' for l in ("en", "vi", "zh"))
            return f'<div class="widget-note" role="note">{notes}</div>'
        if ctx["explorer_cell"]:
            link = rel(page, "explorer.html")
            return (f'<div class="widget-note" role="note"><p>{escape(site.t("widget_explorer", lang))} '
                    f'<a href="{link}">{escape(site.t("explorer", lang))}</a>.</p></div>')
        return f'<div class="widget-note" role="note"><p>{escape(site.t("widget_other", lang))}</p></div>'
    if "image/png" in data:
        raw = base64.b64decode(data["image/png"])
        ctx["figure"] += 1
        name = f"img/{ctx['img_prefix']}-{ctx['figure']:02d}.png"
        site.assets[name] = raw
        size = png_size(raw)
        dims = f' width="{size[0]}" height="{size[1]}"' if size else ""
        alt = site.t("figure_alt", lang).format(n=ctx["figure"])
        if ctx.get("about"):                     # what it shows: the prose just before the figure's cell
            alt = f"{alt}{'。' if lang == 'zh' else '. '}{ctx['about']}"
        src = rel(page, name)
        return (f'<figure class="output figure"><a class="figure-link" href="{src}" title="{escape(site.t("figure_open", lang))}">'
                f'<img src="{src}" alt="{escape(alt)}"{dims} loading="lazy"></a></figure>')
    if "image/svg+xml" in data:
        return f'<div class="output svg">{data["image/svg+xml"]}</div>'
    if "text/html" in data:
        return f'<div class="output html">{data["text/html"]}</div>'
    if "text/markdown" in data:
        return f'<div class="output markdown">{markdown(site, data["text/markdown"], ctx["src_dir"], page)}</div>'
    if "text/latex" in data:
        tex = data["text/latex"].strip().strip("$")
        return f'<div class="output math-display">{render_math(tex, True)}</div>'
    if "text/plain" in data:
        return f'<pre class="output stdout">{escape(ANSI.sub("", data["text/plain"]))}</pre>'
    return ""


def render_notebook(site: Site, nb_path: Path, page: str, lang: str, img_prefix: str) -> tuple[str, list, list]:
    """(HTML of the cells, headings [(level, id, html)], search sections [(id, title, text)])."""
    nb = nbformat.read(nb_path, as_version=4)
    src_dir = nb_path.parent.relative_to(ROOT).as_posix()
    flags = exercise_flags(nb.cells)
    headings: list = []
    ctx = {"lang": lang, "page": page, "figure": 0, "img_prefix": img_prefix, "src_dir": src_dir, "explorer_cell": False}
    parts = []
    for cell, is_exercise in zip(nb.cells, flags):
        classes = ["cell", cell.cell_type] + (["exercise"] if is_exercise else [])
        if cell.cell_type == "markdown":
            body = markdown(site, cell.source, src_dir, page, headings)
            ctx["about"] = figure_about(body)
            parts.append(f'<div class="{" ".join(classes)}">{body}</div>')
            continue
        if cell.cell_type != "code":
            continue
        ctx["explorer_cell"] = bool(EXPLORER_CALL.search(cell.source))
        badge = (f'<span class="badge-exercise">{escape(site.t("exercise", lang))}</span>' if is_exercise else "")
        code = (f'<div class="code-wrap">{badge}<pre class="code highlight" aria-label="{escape(site.t("code", lang))}">'
                f'<code>{highlight_code(cell.source)}</code></pre></div>')
        outputs = "".join(render_output(site, o, ctx) for o in cell.get("outputs", []))
        if outputs:
            outputs = f'<div class="outputs">{outputs}</div>'
        if is_setup_cell(site.course, cell.source):
            parts.append(f'<details class="{" ".join(classes)} setup"><summary>{escape(site.t("setup_cell", lang))}</summary>'
                         f"{code}{outputs}</details>")
        else:
            parts.append(f'<div class="{" ".join(classes)}">{code}{outputs}</div>')
    body = "\n".join(parts)
    return body, headings, search_sections(body, headings)


def figure_about(body: str, limit: int = 220) -> str:
    """A figure's description for its alt text: the first sentences of the prose before it."""
    text = strip_tags(body)
    if len(text) <= limit:
        return text
    cut = max(text.rfind(end, 0, limit) for end in (". ", "。", "：", ": "))
    return text[:cut + 1].strip() if cut > 40 else text[:limit].rstrip() + "…"


def search_sections(body: str, headings: list) -> list:
    """Split a rendered page at its <h1>/<h2> headings: [(id, title text, plain text)]."""
    sections = []
    cuts = [(m.start(), m.group(1)) for m in re.finditer(r'<h[12] id="([^"]+)"', body)]
    titles = {hid: strip_tags(text) for _, hid, text in headings}
    cuts = cuts or [(0, "")]
    for i, (start, hid) in enumerate(cuts):
        end = cuts[i + 1][0] if i + 1 < len(cuts) else len(body)
        chunk = body[start:end]
        chunk = re.sub(r'<pre class="output[^"]*">.*?</pre>', " ", chunk, flags=re.S)   # not the printed numbers
        chunk = re.sub(r"<h[12] [^>]*>.*?</h[12]>", " ", chunk, count=1, flags=re.S)      # the title is apart
        sections.append((hid, titles.get(hid, ""), strip_tags(chunk)))
    return sections


# ----------------------------------------------------------------------------- pages

def jinja_env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                              trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)


def page_context(site: Site, page: str, lang: str) -> dict:
    """What the base template needs: relative links and UI words in the page's language."""
    u = lambda target: rel(page, target)                                       # noqa: E731
    words = {k: (v.get(lang) or v["en"]) for k, v in site.ui.items()}
    return {"lang": lang, "html_lang": HTML_LANG[lang], "u": u, "w": words, "course": site.course,
            "lessons": site.lessons, "page": page, "repo_url": site.course.REPO_URL,
            "label": lambda lesson, l=lang: lesson_label(site, lesson, l)}


def binder_url(course, path: str | None = None) -> str:
    try:
        return course.binder_url(path) if path else course.binder_url()
    except TypeError:
        return f"https://mybinder.org/v2/gh/{course.REPO}/{course.BRANCH}?urlpath=lab/tree/{path}"


def build_lessons(site: Site, env: jinja2.Environment) -> None:
    for lang in LANGS:
        mine = [l for l in site.lessons if lang in l.langs]
        other = [x for x in LANGS if x != lang][0]
        for i, lesson in enumerate(mine):
            page = f"{lang}/{lesson.stem}.html"
            nb_rel = f"lessons_{lang}/{lesson.stem}.ipynb"
            body, headings, sections = render_notebook(site, ROOT / nb_rel, page, lang, f"{lang}/{lesson.stem}")
            lesson.headings[lang] = headings
            title = strip_tags(headings[0][2]) if headings else lesson_label(site, lesson, lang)
            switch = (f"{other}/{lesson.stem}.html" if other in lesson.langs else f"{other}/index.html")
            ctx = page_context(site, page, lang)
            ctx.update(title=title, body=Markup(body), lesson=lesson, other=other, other_lang=HTML_LANG[other],
                       switch=switch, switch_same=other in lesson.langs,
                       colab=site.course.colab_url(nb_rel), binder=binder_url(site.course, nb_rel),
                       prev=mine[i - 1] if i > 0 else None, next=mine[i + 1] if i + 1 < len(mine) else None,
                       toc=[(hid, Markup(text), bool(re.match(r"\s*\d", strip_tags(text))))
                            for level, hid, text in headings if level == 2])
            site.pages[page] = env.get_template("lesson.html").render(ctx)
            page_title = lesson_label(site, lesson, lang)
            for hid, sec_title, text in sections:
                site.search_docs.append({"u": f"{page}#{hid}" if hid else page, "p": page_title, "t": sec_title or page_title,
                                         "l": lang, "x": text})


def readme_intro(site: Site) -> tuple[str, list]:
    """The README's title and its three-language introduction paragraphs [(lang, html)]."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    title = re.search(r"^#\s+(.+)$", text, re.M).group(1)
    intro = text.split("\n## ", 1)[0]
    blocks = []
    for para in re.split(r"\n\s*\n", intro):
        m = re.match(r"\*\*(English|Tiếng Việt|中文)[.。]\*\*", para.strip())
        if m:
            lang = {"English": "en", "Tiếng Việt": "vi", "中文": "zh"}[m.group(1)]
            blocks.append((lang, markdown(site, para, "", "index.html")))
    return title, blocks


def build_home(site: Site, env: jinja2.Environment) -> None:
    title, blocks = readme_intro(site)
    ctx = page_context(site, "index.html", "en")
    ctx.update(title=title, intro=[(HTML_LANG[l], l, Markup(h)) for l, h in blocks],
               ui=site.ui, html_lang_of=HTML_LANG, langs=LANGS, binder=binder_url(site.course))
    site.pages["index.html"] = env.get_template("home.html").render(ctx)


def build_lesson_index(site: Site, env: jinja2.Environment) -> None:
    for lang in LANGS:
        page = f"{lang}/index.html"
        readme = ROOT / f"lessons_{lang}" / "README.md"
        text = readme.read_text(encoding="utf-8") if readme.exists() else ""
        start, end = site.course.MAP_START, site.course.MAP_END
        text = re.sub(re.escape(start) + r".*?" + re.escape(end), "\n\n@@COURSE_MAP@@\n\n", text, flags=re.S)
        body = markdown(site, text, f"lessons_{lang}", page)
        ctx = page_context(site, page, lang)
        course_map = env.get_template("course_map.html").render(ctx)
        if "@@COURSE_MAP@@" in body:
            body = re.sub(r"<p>@@COURSE_MAP@@</p>", course_map, body)
        else:
            body += course_map
        other = [x for x in LANGS if x != lang][0]
        ctx.update(title=strip_tags(re.search(r"<h1[^>]*>(.*?)</h1>", body).group(1)) if "<h1" in body
                   else site.t("lessons", lang), body=Markup(body), switch=f"{other}/index.html", other=other,
                   other_lang=HTML_LANG[other])
        site.pages[page] = env.get_template("page.html").render(ctx)
        for hid, sec_title, text_ in search_sections(body, []):
            site.search_docs.append({"u": page, "p": ctx["title"], "t": ctx["title"], "l": lang, "x": text_})


def build_explorer(site: Site, env: jinja2.Environment) -> None:
    nb_rel = "notebooks/attention_explorer.ipynb"
    page = "explorer.html"
    body, headings, _ = render_notebook(site, ROOT / nb_rel, page, "en", "explorer")
    # the live explorer note would point to this very page: say it in three languages instead
    body = tag_mixed_lang(body)
    ctx = page_context(site, page, "en")
    ctx.update(title=strip_tags(headings[0][2]) if headings else "Attention explorer", body=Markup(body),
               colab=site.course.colab_url(nb_rel), binder=binder_url(site.course, nb_rel), ui=site.ui,
               html_lang_of=HTML_LANG, langs=("en",) + LANGS)
    site.pages[page] = env.get_template("explorer.html").render(ctx)


def glossary_rows(glossary) -> tuple[list, list]:
    """[(concept, {en, vi, zh}, {vi: [avoid...], zh: [...]}, {vi: d2l, zh: d2l})], d2l languages present."""
    avoid = glossary.AVOID
    d2l_table = getattr(glossary, "D2L", {})  # {lang: {concept: d2l term}} where d2l differs
    rows = []
    for concept, entry in glossary.GLOSSARY.items():
        avoid_of = {lang: sorted(w for w, c in avoid.get(lang, {}).items() if c == concept) for lang in LANGS}
        d2l = {lang: d2l_table[lang][concept] for lang in LANGS if concept in d2l_table.get(lang, {})}
        rows.append((concept, entry, avoid_of, d2l))
    return rows, [lang for lang in LANGS if d2l_table.get(lang)]


def load_glossary():
    """attnlab.glossary (GLOSSARY, AVOID, D2L), loaded from its file without importing torch."""
    return _load_module("course.glossary")


def build_glossary(site: Site, env: jinja2.Environment) -> None:
    glossary = load_glossary()
    rows, d2l_langs = glossary_rows(glossary)
    ctx = page_context(site, "glossary.html", "en")
    ctx.update(title="Glossary · Thuật ngữ · 术语表", rows=rows, d2l_langs=d2l_langs, ui=site.ui,
               html_lang_of=HTML_LANG, langs=LANGS)
    site.pages["glossary.html"] = env.get_template("glossary.html").render(ctx)
    for concept, entry, _, d2l in rows:
        words = " · ".join([entry.get("en", ""), entry.get("vi", ""), entry.get("zh", "")] + list(d2l.values()))
        for lang in LANGS:
            site.search_docs.append({"u": f"glossary.html#g-{concept}", "p": site.t("glossary", lang),
                                     "t": f"{entry.get(lang, '')} ({entry.get('en', '')})", "l": lang, "x": words})


def build_license(site: Site, env: jinja2.Environment) -> None:
    texts = []
    for key, names in (("license_code", ("LICENSE", "LICENSE.md")), ("license_content", ("LICENSE-CONTENT", "LICENSE-CONTENT.md"))):
        found = next((ROOT / n for n in names if (ROOT / n).exists()), None)
        if found is None:
            texts.append((key, None, None))
        elif found.suffix == ".md":
            texts.append((key, found.name, Markup(markdown(site, found.read_text(encoding="utf-8"), "", "license.html"))))
        else:
            texts.append((key, found.name, Markup(f'<pre class="license-text">{escape(found.read_text(encoding="utf-8"))}</pre>')))
    ofl = FONT_LICENSE.read_text(encoding="utf-8")
    ctx = page_context(site, "license.html", "en")
    ctx.update(title="License · Giấy phép · 许可协议", texts=texts, ofl=ofl, ui=site.ui, html_lang_of=HTML_LANG,
               langs=("en",) + LANGS)
    site.pages["license.html"] = env.get_template("license.html").render(ctx)


def build_search(site: Site, env: jinja2.Environment) -> None:
    for lang in LANGS:
        page = f"{lang}/search.html"
        ctx = page_context(site, page, lang)
        other = [x for x in LANGS if x != lang][0]
        ctx.update(title=site.t("search", lang), switch=f"{other}/search.html", other=other, other_lang=HTML_LANG[other])
        site.pages[page] = env.get_template("search.html").render(ctx)


# ----------------------------------------------------------------------------- assets

def subset_font(chars: set[str]) -> bytes:
    """The bundled font cut down to the characters the site uses, as WOFF (zlib)."""
    import io

    from fontTools import subset
    from fontTools.ttLib import TTFont

    opts = subset.Options()
    opts.flavor = "woff"
    opts.name_IDs = ["*"]
    opts.name_languages = ["*"]
    opts.notdef_outline = True
    opts.layout_features = ["*"]
    font = TTFont(FONT_SOURCE, lazy=True)
    cmap = font.getBestCmap()
    unicodes = sorted({ord(c) for c in chars} & set(cmap))
    font = subset.load_font(str(FONT_SOURCE), opts)
    sub = subset.Subsetter(opts)
    sub.populate(unicodes=unicodes)
    sub.subset(font)
    buf = io.BytesIO()
    subset.save_font(font, buf, opts)
    return buf.getvalue()


def write_site(site: Site) -> None:
    out = site.out
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for path, text in site.pages.items():
        dest = out / path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text, encoding="utf-8")
    for path, data in site.assets.items():
        dest = out / path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)


def build(out: Path) -> dict:
    """Build the whole site into `out`; returns a few figures (pages, bytes, seconds)."""
    start = time.perf_counter()
    course = _load_module("course")
    site = Site(out=out, course=course, ui=load_ui())
    site.lessons = discover_lessons(course)
    env = jinja_env()
    build_lessons(site, env)
    build_lesson_index(site, env)
    build_home(site, env)
    build_explorer(site, env)
    build_glossary(site, env)
    build_license(site, env)
    build_search(site, env)

    static = HERE / "static"
    for f in static.iterdir():
        site.assets[f"assets/{f.name}"] = f.read_bytes()
    pyg = HtmlFormatter(style=PYGMENTS_STYLE).get_style_defs(".highlight")
    site.assets["assets/pygments.css"] = pyg.encode()
    ui_js = {k: {l: v.get(l) or v["en"] for l in ("vi", "zh", "en")} for k, v in site.ui.items()
             if k.startswith("search")}
    index_js = ("window.ATTN_SEARCH = " + json.dumps(site.search_docs, ensure_ascii=False, separators=(",", ":"))
                + ";\nwindow.ATTN_UI = " + json.dumps(ui_js, ensure_ascii=False, separators=(",", ":")) + ";\n")
    site.assets["assets/search-index.js"] = index_js.encode()

    chars = set("".join(site.pages.values())) | set(index_js)
    site.assets["assets/fonts/NotoSansSC-AttnLab.woff"] = subset_font(chars)
    site.assets["assets/fonts/OFL.txt"] = FONT_LICENSE.read_bytes()
    site.assets[".nojekyll"] = b""
    write_site(site)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return {"pages": len(site.pages), "files": sum(1 for p in out.rglob("*") if p.is_file()), "bytes": size,
            "seconds": time.perf_counter() - start, "lessons": {l: sum(l in x.langs for x in site.lessons) for l in LANGS}}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "build" / "site"), help="output folder (replaced)")
    args = parser.parse_args(argv)
    stats = build(Path(args.out).resolve())
    print(f"site: {stats['pages']} pages ({stats['lessons']['vi']} vi + {stats['lessons']['zh']} zh lessons), "
          f"{stats['files']} files, {stats['bytes'] / 1e6:.1f} MB, built in {stats['seconds']:.1f} s -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
