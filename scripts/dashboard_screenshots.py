"""Screenshots of every dashboard page with headless Chromium (for the docs
and for looking at the pages before a change is called done).

Run: ``python scripts/dashboard_screenshots.py URL OUT_DIR [--experiment E] [--run R] [--compare R1,R2]``
with URL the URL ``xrun dashboard`` printed (``http://127.0.0.1:8050/?token=...``: every
page needs the token, which the first visit leaves in a cookie). Writes
``campaigns.png``, ``campaign.png``, ``run.png``, ``compare.png`` and
``tree.png`` (after a click on the first node) and prints any console error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

# the dashboard tests' launch arguments of Chromium
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "dashboard"))
from dashboard_helpers import CHROMIUM_ARGS as ARGS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("out", type=Path)
    parser.add_argument("--experiment", required=True)
    parser.add_argument("--run", required=True)
    parser.add_argument("--compare", default="")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--full-page", action="store_true")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    compare = "&".join(f"runs={r}" for r in args.compare.split(",") if r)
    pages = {"campaigns": "/", "campaign": f"/campaigns/{args.experiment}", "run": f"/runs/{args.run}",
             "compare": f"/compare?{compare}", "tree": f"/tree?experiment={args.experiment}"}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 860})
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        base = args.url.split("?", 1)[0].rstrip("/")
        if "token=" in args.url:
            page.goto(args.url)  # sets the token cookie
        for name, path in pages.items():
            page.goto(base + path)
            page.wait_for_timeout(2500)
            if name == "tree":
                box = page.locator("#tree-graph .point").first.bounding_box()
                if box:
                    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
                    page.wait_for_timeout(2000)
            page.screenshot(path=str(args.out / f"{name}.png"), full_page=args.full_page)
            print(args.out / f"{name}.png")
        browser.close()
    print("\n".join(f"console error: {e}" for e in errors) or "no console errors")


if __name__ == "__main__":
    main()
