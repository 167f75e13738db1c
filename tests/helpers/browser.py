"""What the two browser tests (test_site, test_widgets_browser) share: skip-or-fail and finding Chromium."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

# CI sets COURSEKIT_REQUIRE_SITE=1 where the site extra, Playwright and Chromium are installed: there,
# anything missing is a failure rather than a skip, so that a broken install cannot pass as a skipped test.
REQUIRED = os.environ.get("COURSEKIT_REQUIRE_SITE", "").strip() not in ("", "0")
NO_CHROMIUM = "no Chromium found (Debian: apt-get install -y chromium; or set $CHROMIUM to its path)"


def skip_or_fail(reason: str):
    """Skip the calling test module, or fail it where CI requires the browser tests to run."""
    if REQUIRED:
        pytest.fail(f"{reason} (COURSEKIT_REQUIRE_SITE is set)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def chromium_executable() -> str | None:
    """``$CHROMIUM``, Debian's /usr/bin/chromium, or a Chromium/Chrome on the PATH; None if there is none."""
    for candidate in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser"), shutil.which("google-chrome")):  # fmt: skip
        if candidate and Path(candidate).exists():
            return candidate
    return None
