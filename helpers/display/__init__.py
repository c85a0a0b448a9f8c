"""What the learner sees: figures in the course style, their alt text, views of results, progress bars.

``plots``           one function per figure (``course.mplstyle``, the colour-blind-safe style file)
``alt_text``        what a figure shows and its headline numbers, read from the figure itself
``platform_views``  tables and figures of the platforms lesson's results
``progress``        progress with the time left, for ``python -m helpers record``

Tables, which every layer renders, are :mod:`helpers.tables`.
"""
