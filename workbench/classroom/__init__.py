"""The class store: classes, their members, answers, sends and posted runs, in a database.

No Streamlit here (a test enforces it): the Class page and the knowledge checks call
`ClassStore`'s methods, and every replica of the app sees the same class because the data lives in
the database, never in one process's memory.
"""
