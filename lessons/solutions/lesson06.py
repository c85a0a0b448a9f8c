# Solutions to lesson 06's exercises (06-measure-bandwidth.ipynb).
# helpers.exercises.solution("06", NAME) returns one section; an instructor may delete this folder.

# exercise: model_GBps
def model_GBps(nbytes, t0, peak_GBps):
    """GB/s of a transfer of `nbytes` that takes t0 seconds of fixed cost plus nbytes / peak on the link."""
    seconds = t0 + nbytes / (peak_GBps * 1e9)             # times add; rates do not
    return nbytes / seconds / 1e9

# exercise: fraction_of_copy
def fraction_of_copy(memcpy, streams, nbytes):
    """The zero-copy read kernel's rate as a fraction of the pinned memcpy HtoD (the link rate) at `nbytes`."""
    kernel = streams.one(nbytes=nbytes, memory="zero_copy", op="read")["GBps"]
    copy = memcpy.one(nbytes=nbytes, direction="htod", host_memory="pinned")["GBps"]
    return kernel / copy
