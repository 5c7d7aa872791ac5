#!/usr/bin/env python3
"""Build shared/attnlab/fonts/NotoSansSC-AttnLab-Subset.ttf.

Subsets Noto Sans CJK SC Regular (SIL OFL 1.1) to ASCII + GB2312 + CJK
punctuation + fullwidth forms + common general punctuation + every CJK character
the course can show (``course_characters``: its messages, its data — the Tang
corpus that lesson 10's GPT samples from, the glossary —, every notebook's
cells and stored outputs, the lesson READMEs and the website's pages; GB2312
alone misses hundreds of the corpus's characters), converts the CFF
outlines to TrueType (glyf) outlines so that matplotlib's PDF/PS backends can
embed it, and renames the family to "Noto Sans SC AttnLab".

Only this build step needs the Debian package fonts-noto-cjk; the course
uses the generated file at run time.

Usage (from the repository root):

    python tools/make_font_subset.py \
        [--source /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc] \
        [--output shared/attnlab/fonts/NotoSansSC-AttnLab-Subset.ttf]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re

from fontTools import subset
from fontTools.pens.cu2quPen import Cu2QuPen
from fontTools.pens.ttGlyphPen import TTGlyphPen
from fontTools.ttLib import TTFont, newTable

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_SOURCE = pathlib.Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
DEFAULT_OUTPUT = ROOT / "shared" / "attnlab" / "fonts" / "NotoSansSC-AttnLab-Subset.ttf"

FAMILY = "Noto Sans SC AttnLab"
PS_NAME = "NotoSansSCAttnLab-Regular"
SC_FAMILY_IN_TTC = "Noto Sans CJK SC"
UNWANTED_FEATURES = {"locl", "vert", "vrt2", "vkrn", "vpal", "vhal", "vchw", "valt"}
MAX_ERR = 1.0  # cu2qu tolerance in font units (UPM 1000)

# Characters that GB2312 tables map differently (Python's codec picks one of
# each pair), plus common punctuation outside GB2312.
EXTRA_CHARS = (
    "\u00b7\u30fb"        # middle dot / katakana middle dot
    "\u2014\u2015"        # em dash / horizontal bar
    "\u2026\u22ef"        # ellipsis / midline ellipsis
    "\uff5e\u301c"        # fullwidth tilde / wave dash
    "\u00d7\u00f7\u2212"  # times, divide, minus
)
EXTRA_RANGES = [
    (0x0020, 0x007E),  # ASCII
    (0x00A0, 0x00BF),  # Latin-1 punctuation and symbols
    (0x2010, 0x2027),  # dashes, quotes, bullets, ellipsis
    (0x2030, 0x203E),  # per mille, primes, reference mark
    (0x3000, 0x303F),  # CJK Symbols and Punctuation
    (0xFF00, 0xFFEF),  # Halfwidth and Fullwidth Forms
]


def gb2312_chars() -> set[str]:
    """Every character of GB2312, by decoding all valid byte pairs."""
    chars = set()
    for hi in range(0xA1, 0xF8):
        for lo in range(0xA1, 0xFF):
            try:
                chars.add(bytes([hi, lo]).decode("gb2312"))
            except UnicodeDecodeError:
                pass
    return chars


# Characters the subset exists for: CJK ideographs (all extensions), CJK punctuation, kana,
# bopomofo, fullwidth forms. Latin and Vietnamese are drawn by DejaVu Sans (figures) or the
# reader's own fonts (the website).
CJK = re.compile("[\u2e80-\u2fff\u3000-\u303f\u3040-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
                 "\ufe30-\ufe4f\uff00-\uffef\U00020000-\U0003ffff]")
# Of those, the ones Noto Sans CJK SC itself has no glyph for (61 rare characters of the Tang
# corpus, CJK extensions B-G): no subset of it can draw them. `--check-source` recomputes this.
NOT_IN_SOURCE = set(
    "𠡠𢋙𢬵𢸧𢽾𣃁𣨼𣺫𤝞𤞚𤬊𤮧𥕕𥝧𥩟𥫽𥮾𥱧𥳇𥳽𦍠𦍩𦫢𦰏𦶟𦼮𧏖𧳽𨀁𨯥𩝊𩟿𩩉𩭝𩭹𪭢𪻐𫄠𫄥𫈟𫏋𫏐𫐌𫓩"
    "𫔇𫗦𫗪𫗰𫘞𫘤𫚥𫛛𫛥𫛳𫛶𫛸𫜪𬵩𬾠𮪃𰬸")


PINGSHUI_TABLE = "pingshui_simplified.tsv"


def course_sources(root: pathlib.Path = ROOT) -> list[pathlib.Path]:
    """Every file whose text the course shows, in a figure, a printed output or a web page."""
    package = root / "shared" / "attnlab"
    files = sorted((package / "messages").glob("*.json"))
    # data: the corpora and word lists, not the documents beside them (PROVENANCE.md, the licences are read
    # in an editor, never drawn in the course font) nor the 平水韵 lookup table (course_characters takes
    # only its rhyme-group names: a character of the table is shown only when the corpus has it)
    files += sorted(p for p in (package / "data").rglob("*") if p.is_file() and p.suffix in (".json", ".txt", ".tsv", ".md")
                    and p.name != "PROVENANCE.md" and not p.name.startswith("LICENSE"))
    files += sorted(root.glob("lessons_*/*.ipynb")) + sorted((root / "notebooks").glob("*.ipynb"))
    files += sorted(root.glob("lessons_*/README.md")) + [root / "README.md", root / "docs" / "install-pypi.md"]
    files += [root / "tools" / "website" / "ui.json", *sorted((root / "tools" / "website" / "templates").glob("*.html"))]
    return [f for f in files if f.is_file()]


def course_characters(root: pathlib.Path = ROOT) -> dict[str, str]:
    """{CJK character: the first file that shows it} over ``course_sources`` (JSON and notebooks
    decoded, so that escaped text counts)."""
    found: dict[str, str] = {}
    for path in course_sources(root):
        text = path.read_text(encoding="utf-8")
        if path.name == PINGSHUI_TABLE:        # character, 平/仄, groups, traditional forms: the groups only
            text = " ".join(line.split("\t")[2] for line in text.splitlines() if line and not line.startswith("#"))
        if path.suffix in (".json", ".ipynb"):
            text = json.dumps(json.loads(text), ensure_ascii=False)
        for ch in CJK.findall(text):
            found.setdefault(ch, str(path.relative_to(root)))
    return found


def wanted_codepoints() -> set[int]:
    cps = {ord(c) for c in gb2312_chars()}
    cps |= {ord(c) for c in course_characters()}
    cps |= {ord(c) for c in EXTRA_CHARS}
    for lo, hi in EXTRA_RANGES:
        cps.update(range(lo, hi + 1))
    return cps


def load_sc_face(source: pathlib.Path) -> TTFont:
    if source.suffix.lower() in (".ttc", ".otc"):
        for number in range(32):
            font = TTFont(source, fontNumber=number, recalcTimestamp=False)
            if font["name"].getDebugName(1) == SC_FAMILY_IN_TTC:
                return font
        raise SystemExit(f"{SC_FAMILY_IN_TTC!r} not found in {source}")
    return TTFont(source, recalcTimestamp=False)


def subset_font(font: TTFont, codepoints: set[int]) -> list[int]:
    cmap = font.getBestCmap()
    present = sorted(cp for cp in codepoints if cp in cmap)
    options = subset.Options()
    options.name_IDs = ["*"]
    options.name_languages = ["*"]
    options.notdef_outline = True
    options.hinting = False
    options.desubroutinize = True
    options.drop_tables += ["BASE", "VORG", "vhea", "vmtx", "DSIG"]
    # 'locl' would pull in ~5800 JP/KR/TC/HK glyph variants; vertical
    # features are useless without vhea/vmtx.
    options.layout_features = [f for f in options.layout_features
                               if f not in UNWANTED_FEATURES]
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=present)
    subsetter.subset(font)
    return present


def cff_to_glyf(font: TTFont) -> None:
    """CFF -> TrueType outlines (after fontTools' Snippets/otf2ttf.py)."""
    glyph_order = font.getGlyphOrder()
    glyph_set = font.getGlyphSet()
    quad = {}
    for name in glyph_order:
        tt_pen = TTGlyphPen(glyph_set)
        glyph_set[name].draw(Cu2QuPen(tt_pen, MAX_ERR, reverse_direction=True))
        quad[name] = tt_pen.glyph()

    font["loca"] = newTable("loca")
    font["glyf"] = glyf = newTable("glyf")
    glyf.glyphOrder = glyph_order
    glyf.glyphs = quad
    del font["CFF "]
    glyf.compile(font)

    hmtx = font["hmtx"]
    for name, glyph in glyf.glyphs.items():
        if hasattr(glyph, "xMin"):
            hmtx[name] = (hmtx[name][0], glyph.xMin)

    font["maxp"] = maxp = newTable("maxp")
    maxp.tableVersion = 0x00010000
    maxp.maxZones = 1
    for attr in ("maxTwilightPoints", "maxStorage", "maxFunctionDefs",
                 "maxInstructionDefs", "maxStackElements",
                 "maxSizeOfInstructions", "maxComponentElements"):
        setattr(maxp, attr, 0)
    maxp.compile(font)

    post = font["post"]
    post.formatType = 2.0
    post.extraNames = []
    post.mapping = {}
    post.glyphOrder = glyph_order
    font["head"].glyphDataFormat = 0
    font.sfntVersion = "\x00\x01\x00\x00"


def rename(font: TTFont) -> None:
    name = font["name"]
    version = font["head"].fontRevision
    name.removeNames(nameID=16)
    name.removeNames(nameID=17)
    new = {
        1: FAMILY,
        2: "Regular",
        3: f"{version:.3f};AttnLab;{PS_NAME}",
        4: FAMILY,
        5: f"Version {version:.3f}; subset of Noto Sans CJK SC for attnlab",
        6: PS_NAME,
    }
    for name_id, text in new.items():
        name.removeNames(nameID=name_id)
        name.setName(text, name_id, 3, 1, 0x409)
        name.setName(text, name_id, 1, 0, 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=pathlib.Path, default=DEFAULT_SOURCE)
    parser.add_argument("--output", type=pathlib.Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--check-source", action="store_true",
                        help="only list the course's characters the source font lacks (NOT_IN_SOURCE)")
    args = parser.parse_args()

    font = load_sc_face(args.source)
    lacking = {c for c in course_characters() if ord(c) not in font.getBestCmap()}
    if args.check_source:
        print("".join(sorted(lacking)))
        return
    if lacking != NOT_IN_SOURCE:
        raise SystemExit(f"update NOT_IN_SOURCE: the source font lacks {''.join(sorted(lacking))}")
    present = subset_font(font, wanted_codepoints())
    cff_to_glyf(font)
    rename(font)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    font.save(args.output)

    check = TTFont(args.output)
    cmap = check.getBestCmap()
    n_hanzi = sum(1 for cp in cmap if 0x4E00 <= cp <= 0x9FFF)
    print(f"wrote {args.output} ({args.output.stat().st_size / 1e6:.2f} MB): "
          f"{len(present)} requested characters, {len(cmap)} mapped, "
          f"{check['maxp'].numGlyphs} glyphs, "
          f"{n_hanzi} hanzi, family {check['name'].getDebugName(1)!r}")


if __name__ == "__main__":
    main()
