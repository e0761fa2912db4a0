"""Streamlit, Plotly and graphviz pieces that the pages share."""
