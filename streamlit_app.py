"""The app, whatever launches it: `streamlit run streamlit_app.py` (make run, Community Cloud's
default main file, the Dockerfile, the tests and the benchmarks alike) serves Streamlit's router
(router.py) plus one HTTP route, the live frames browser components ask for without a rerun
(components/frame_route.py), and a guard on Streamlit's upload endpoint
(components/upload_guard.py: uploads per session rate-limited and bounded, and the uploads of
closed sessions dropped). There is no second way to serve it.

Its lifespan also starts the warm-up (app_pages/warm_up.py): the imports and PyTorch's first
error that a cold server's first page run paid in the first learner's wait.
"""
import workbench  # noqa: F401  (first: pins torch to one thread before torch is imported)

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from starlette.middleware import Middleware
from streamlit.starlette import App

from app_pages import warm_up
from components import frame_route, upload_guard


@contextlib.asynccontextmanager
async def lifespan(app: Any) -> AsyncIterator[None]:
    """At the server's start, before any request: the warm-up thread, then the upload sweeps."""
    warm_up.start()
    async with upload_guard.lifespan(app):
        yield


app = App("router.py", routes=frame_route.routes(),
          middleware=[Middleware(upload_guard.UploadGuard)], lifespan=lifespan)
