"""Tools around the lessons, not used by them: the command line's pieces, the book, the slides, the classroom.

``record``        ``python -m helpers record``: every experiment live into data/
``model_check``   ``python -m helpers model``: fit the PCIe model on one record, check it on others
``book``          the website of the executed lessons (``make book``)
``slides``        a reveal.js deck per lesson (``make slides``)
``classroom``     every lesson run live by N learners at once on one GPU
``class_record``  ``python -m helpers class-record``: the instructor's record of this GPU, shown to a class
``cell_watchdog`` inside a classroom's kernel: the stacks of a cell past its timeout
``lesson_times``  a lesson's estimated and measured time
``lint``          ``make lint``: spelling, links, notebook metadata, schemas
``colab``         set the course up on Colab or a fresh machine (standard library only)
``notebook_git``  keep ``git status`` clean when JupyterLab saves a lesson
"""
