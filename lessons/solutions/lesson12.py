# Solutions to lesson 12's exercises (12-decide-when-zero-copy-wins.ipynb).
# helpers.exercises.solution("12", NAME) returns one section; an instructor may delete this folder.

# exercise: model_seconds
def model_seconds(k, n, link_GBps, device_GBps, zc_GBps):
    """(copy, zero_copy): seconds for k vector adds on n floats per array, by the model above."""
    nbytes = 12 * n                                          # a and b read, c written: 4 bytes each
    copy = nbytes / (link_GBps * 1e9) + k * nbytes / (device_GBps * 1e9)   # over the link once, k kernels
    zero_copy = k * nbytes / (zc_GBps * 1e9)                 # over the link on every use
    return copy, zero_copy

# exercise: chunk_elements
def chunk_elements(budget_bytes, sets):
    """Elements per chunk when `sets` sets of three float32 device buffers must fit in budget_bytes."""
    per_element = 3 * 4 * sets                               # a, b and c chunks, 4 bytes each, per set
    return max(256, budget_bytes // per_element // 256 * 256)   # whole blocks of 256 threads
