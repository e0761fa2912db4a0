"""The app as served: Streamlit's router (streamlit_app.py) plus one HTTP route, the live
frames browser components fetch without a rerun (components/frame_route.py).

    streamlit run serve.py

`streamlit run streamlit_app.py` serves the same pages without the route; the moons trainer's
live view then updates by fragment reruns, at a fraction of the frame rate.
"""
from streamlit.starlette import App

from components import frame_route

frame_route.SERVED = True
app = App("streamlit_app.py", routes=frame_route.routes())
