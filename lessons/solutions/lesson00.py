# Solutions to lesson 00's exercises (00-start-here.ipynb).
# helpers.exercises.solution("00", NAME) returns one section; an instructor may delete this folder.

# exercise: l2_mib
def l2_mib(attributes):
    """The L2 cache's size in MiB, from a GPU's attributes."""
    return attributes["L2_CACHE_SIZE"] / 2**20   # bytes -> MiB: 1 MiB = 2**20 bytes

# exercise: bus_bytes
def bus_bytes(n, reads):
    """Bytes over the bus for c = a + b on n float32, each element of a and b read `reads` times:
    (explicit copies, zero-copy), assuming no cache keeps mapped data."""
    copies = 3 * 4 * n                       # a and b copied in, c copied out: once each, 4 bytes an element
    zero_copy = reads * 2 * 4 * n + 4 * n    # every read of a and b crosses the bus; c is written once
    return copies, zero_copy
