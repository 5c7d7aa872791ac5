"""The course's exercises as nbgrader assignments (docs/grading.md).

``lesson_cells``: find the exercises and the context they need in a lesson notebook.
``build``: write the nbgrader source and release notebooks under ``assignments/`` (``make assignments``).
``settings``: the nbgrader configuration shared by the builder, the grader and hub/nbgrader_config.py.
``grade``: grade a folder of submissions, write grades.csv and the feedback pages (``make grade``).
``report``: read the grades out of nbgrader's gradebook and the graded notebooks; the feedback page.
"""
