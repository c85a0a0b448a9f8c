# Solutions to lesson 12's exercises (12-decide-when-zero-copy-wins.ipynb).
# helpers.exercises.solution("12", NAME) returns one section; an instructor may delete this folder.

# exercise: model_seconds
def model_seconds(k, n, link_GBps, device_GBps, zc_GBps):
    """(copy, zero_copy): seconds for k vector adds on n floats per array, by the model above."""
    nbytes = 12 * n                                          # a and b read, c written: 4 bytes each
    copy = nbytes / (link_GBps * 1e9) + k * nbytes / (device_GBps * 1e9)   # over the link once, k kernels
    zero_copy = k * nbytes / (zc_GBps * 1e9)                 # over the link on every use
    return copy, zero_copy

# exercise: break_even_k
def break_even_k(link_GBps, device_GBps, zc_GBps):
    """The smallest whole k at which copying once, then k kernels, is faster than k zero-copy kernels."""
    # copy(k) < zero_copy(k):  12n/link + k * 12n/device < k * 12n/zc; n cancels
    crossing = (1 / link_GBps) / (1 / zc_GBps - 1 / device_GBps)
    return int(crossing) + 1                  # the first whole k past the crossing (int() rounds down)
