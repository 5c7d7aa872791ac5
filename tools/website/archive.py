"""Pack the built website into one zip file an instructor can copy to any static web server.

    python tools/website/archive.py build/site build/attnlab-site.zip

The site needs nothing from another host (no CDN, no web fonts from outside: tests/test_site.py),
so unpacking the archive into any folder that a web server serves (a university's nginx or
Apache, a campus intranet, a USB stick opened with `python -m http.server`) is the whole install.
The archive is reproducible: sorted entries, fixed timestamps, one top folder `attnlab-site/`.
"""
from __future__ import annotations

import pathlib
import sys
import zipfile

TOP = "attnlab-site"
EPOCH = (2020, 1, 1, 0, 0, 0)       # zip's clock starts in 1980; any fixed date keeps builds identical


def archive(site: pathlib.Path, out: pathlib.Path) -> list[str]:
    """Write ``out`` from every file under ``site``; returns the archived names."""
    if not (site / "index.html").is_file():
        raise SystemExit(f"{site} has no index.html: build the site first (make site)")
    names = []
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for path in sorted(p for p in site.rglob("*") if p.is_file()):
            name = f"{TOP}/{path.relative_to(site).as_posix()}"
            info = zipfile.ZipInfo(name, date_time=EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, path.read_bytes())
            names.append(name)
    return names


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    names = archive(pathlib.Path(argv[0]), pathlib.Path(argv[1]))
    size = pathlib.Path(argv[1]).stat().st_size
    print(f"{argv[1]}: {len(names)} files, {size / 1e6:.1f} MB (unpack into any static web server's folder)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
