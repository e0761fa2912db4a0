"""AppTest's per-instance component scan, done once per test process.

Each new `AppTest` scans every installed distribution's metadata for Streamlit component
manifests (streamlit/testing/v1/app_test.py, `discover_and_register_components`): about 0.25 s
on 2 cores, and the app tests create several hundred AppTests. The installed packages do not
change during a test session and this app declares its components in code, not in a package
manifest, so the first scan's answer is every later one's.
"""
from __future__ import annotations

import functools

from streamlit.components.v2 import manifest_scanner

manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)
