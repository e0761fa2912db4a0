"""The app, whatever launches it: `streamlit run streamlit_app.py` (make run, Community Cloud's
default main file, the Dockerfile, the tests and the benchmarks alike) serves Streamlit's router
(router.py) plus one HTTP route, the live frames browser components ask for without a rerun
(components/frame_route.py), and a guard on Streamlit's upload endpoint
(components/upload_guard.py: uploads per session rate-limited and bounded, and the uploads of
closed sessions dropped). There is no second way to serve it.
"""
import workbench  # noqa: F401  (first: pins torch to one thread before torch is imported)

from starlette.middleware import Middleware
from streamlit.starlette import App

from components import frame_route, upload_guard

app = App("router.py", routes=frame_route.routes(),
          middleware=[Middleware(upload_guard.UploadGuard)], lifespan=upload_guard.lifespan)
