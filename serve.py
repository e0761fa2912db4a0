"""The app as served: Streamlit's router (streamlit_app.py) plus one HTTP route, the live
frames browser components fetch without a rerun (components/frame_route.py), and a guard on
Streamlit's upload endpoint (components/upload_guard.py: uploads per session rate-limited and
bounded, and the uploads of closed sessions dropped).

    streamlit run serve.py

`streamlit run streamlit_app.py` serves the same pages without the route or the guard; the
moons trainer's live view then updates by fragment reruns, at a fraction of the frame rate.
"""
from starlette.middleware import Middleware
from streamlit.starlette import App

from components import frame_route, upload_guard

frame_route.SERVED = True
app = App("streamlit_app.py", routes=frame_route.routes(),
          middleware=[Middleware(upload_guard.UploadGuard)], lifespan=upload_guard.lifespan)
