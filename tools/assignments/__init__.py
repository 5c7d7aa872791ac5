"""The course's exercises as nbgrader assignments, and grading them (docs/grading.md).

``lesson_cells``: find the exercises and the context they need in a lesson notebook.
``build``: write the nbgrader source and release notebooks under ``assignments/`` (``make assignments``).
``settings``: the nbgrader configuration shared by the builder, the grader and hub/nbgrader_config.py.
``grade``: grade a folder of submissions (``make grade``): the workers, the command line.
``submissions``: read what was handed in, check it against the release, put its metadata back.
``runner``: what a submission's kernel executes (its probes) and the verdicts, decided outside it.
``sandbox``: the bubblewrap sandbox one submission runs in; ``harness``: what runs inside it.
``installed``: the package as the sandbox sees it (the wheel, installed read-only for one run).
``suspicious``: what in a notebook looks like an attempt on the grading (a note, never a grade).
``report``: grades.csv, the notes' words and the feedback pages.
"""
