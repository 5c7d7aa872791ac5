"""Course-wide settings: the repository URL and the package's name and version (the one place
each is configured), the notebook setup cell built from them, Colab/Binder links, and the
notebook defaults."""
from __future__ import annotations

REPO = "attnlab-course/attention-course"     # GitHub owner/name: change it here, then `make sync`
BRANCH = "main"
REPO_URL = f"https://github.com/{REPO}"
DISTRIBUTION = "attnlab-course"              # what `pip install` names: pyproject.toml's [project] name
VERSION = "0.1.0"                            # pyproject.toml reads it; change it here, then `make sync`

from .languages import COURSE_LANGUAGES, LESSON_DIRS as _LESSON_DIR  # the one source: data/languages.json

LESSON_DIRS = tuple(_LESSON_DIR[lang] for lang in COURSE_LANGUAGES)    # ("lessons_vi", "lessons_zh")
NOTEBOOK_DIRS = LESSON_DIRS + ("notebooks",)

# The course map: notebook stem -> title per language (the lesson READMEs are built from it).
LESSONS = {    # the titles of the lessons' first headings, without "Bài N:" / "第 N 课："
    "01_self_attention": {"vi": "Tự chú ý (self-attention), từng bước một", "zh": "自注意力，一步一步来"},
    "02_multi_head_attention": {"vi": "Chú ý đa đầu", "zh": "多头注意力"},
    "03_positional_encoding": {"vi": "Mã hóa vị trí — cho tự chú ý biết thứ tự của từ",
                               "zh": "位置编码——让自注意力知道词序"},
    "04_attention_masks": {"vi": "Mặt nạ chú ý — che tương lai, che phần đệm", "zh": "注意力掩码——屏蔽未来，屏蔽填充"},
    "05_transformer_block": {"vi": "Khối Transformer — lắp các mảnh lại với nhau", "zh": "Transformer 块——把零件组装起来"},
    "06_encoder_decoder_gpt": {"vi": "Bộ mã hóa, bộ giải mã và GPT", "zh": "编码器、解码器与 GPT"},
    "07_train_tiny_transformer": {"vi": "Huấn luyện một Transformer tí hon", "zh": "训练一个迷你 Transformer"},
    "08_number_translator": {"vi": "Một máy dịch tí hon — viết số thành chữ", "zh": "迷你翻译器——把数字写成汉字"},
    "09_capstone": {"vi": "Bài tập lớn — tự viết chú ý đa đầu và khối Transformer",
                    "zh": "综合练习——从零实现多头注意力与 Transformer 块"},
    "10_poet_gpt": {"vi": "GPT làm thơ — lục bát từ Truyện Kiều", "zh": "会写诗的 GPT——唐代绝句与律诗"},
}


def setup_cell(repo_url: str = REPO_URL, package: str = f"{DISTRIBUTION}=={VERSION}") -> str:
    """The first code cell of every notebook, for a given repository URL and package requirement.

    It is the same in both languages, so its one comment names its purpose in all three
    (vi · zh · en). Where ``attnlab`` is already importable (the README setup, a hub, a wheel)
    it only imports it. In a clone of the course the package lives in ../shared. On Colab, which
    opens the lessons from GitHub, pip installs it from the repository (Colab's own torch,
    matplotlib and ipywidgets stay). Anywhere else pip installs it by name, the version the
    notebook was written for, from the student's own package index (PyPI or a university's
    mirror, whatever pip is configured with), so GitHub is never needed.
    """
    return f'''\
# Cài đặt · 环境设置 · Setup: attnlab
import importlib.util, pathlib, subprocess, sys

COURSE_REPO = "{repo_url}"
COURSE_PACKAGE = "{package}"
if importlib.util.find_spec("attnlab") is None:
    clone = pathlib.Path.cwd().parent / "shared"
    if (clone / "attnlab").is_dir():
        sys.path.insert(0, str(clone))
    else:
        source = f"git+{{COURSE_REPO}}" if "google.colab" in sys.modules else COURSE_PACKAGE
        if subprocess.run([sys.executable, "-m", "pip", "install", "-q", source]).returncode != 0:
            raise SystemExit(f"pip could not install {{source}}: see “Install with pip” in the course README")
        importlib.invalidate_caches()

import attnlab
attnlab.setup_notebook()'''


SETUP_CELL = setup_cell()


def colab_url(path: str) -> str:
    """'Open in Colab' link for a notebook path relative to the repository root."""
    return f"https://colab.research.google.com/github/{REPO}/blob/{BRANCH}/{path}"


def binder_url() -> str:
    return f"https://mybinder.org/v2/gh/{REPO}/{BRANCH}?urlpath=lab"


COLAB_BADGE = "https://colab.research.google.com/assets/colab-badge.svg"
BINDER_BADGE = "https://mybinder.org/badge_logo.svg"
MAP_START, MAP_END = "<!-- course-map:start (make sync writes this block) -->", "<!-- course-map:end -->"


def course_map(lang: str, existing: set[str] | None = None) -> str:
    """The lesson table of lessons_<lang>/README.md, with an 'Open in Colab' badge per lesson."""
    from .i18n import t
    head = t("course.map_head", lang)
    rows = [head, "|---|---|---|"]
    for stem, titles in LESSONS.items():
        if existing is not None and stem not in existing:
            continue
        path = f"lessons_{lang}/{stem}.ipynb"
        badge = f"[![Open In Colab]({COLAB_BADGE})]({colab_url(path)})"
        rows.append(f"| {stem[:2]} | [{titles[lang]}]({stem}.ipynb) | {badge} |")
    return "\n".join([MAP_START, *rows, MAP_END])


README_START, README_END = "<!-- lessons:start (make sync writes this table from attnlab/course/__init__.py) -->", "<!-- lessons:end -->"


def readme_lessons() -> str:
    """The lesson table of the top-level README.md: one row per lesson, one column per course language."""
    from .languages import NAMES
    rows = ["| | " + " | ".join(NAMES[lang] for lang in COURSE_LANGUAGES) + " |",
            "|---|" + "---|" * len(COURSE_LANGUAGES)]
    for stem, titles in LESSONS.items():
        cells = [f"[{titles[lang]}]({_LESSON_DIR[lang]}/{stem}.ipynb)" for lang in COURSE_LANGUAGES]
        rows.append(f"| {stem[:2]} | " + " | ".join(cells) + " |")
    return "\n".join([README_START, *rows, README_END])


def setup_notebook(seed: int = 0) -> None:
    """Notebook defaults: seeded RNG, readable tensor printing, course fonts, fixed figure size."""
    import matplotlib
    import torch

    from .fonts import use_course_fonts

    torch.manual_seed(seed)
    torch.set_printoptions(precision=4, sci_mode=False, linewidth=100)
    use_course_fonts()
    matplotlib.rcParams.update({"figure.dpi": 80, "savefig.dpi": 80, "figure.figsize": (5, 4)})
