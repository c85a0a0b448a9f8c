# Solutions to lesson 02's exercises (02-measure-what-pinning-buys.ipynb).
# helpers.exercises.solution("02", NAME) returns one section; an instructor may delete this folder.

# exercise: seconds_saved
def seconds_saved(copies, nbytes, direction):
    """Seconds one copy of nbytes saves from pinned rather than pageable memory."""
    def one_copy(memory):                                 # time = bytes / (bytes per second)
        return nbytes / (copies.one(direction=direction, host_memory=memory, nbytes=nbytes)["GBps"] * 1e9)
    return one_copy("pageable") - one_copy("pinned")

# exercise: staged_seconds
def staged_seconds(nbytes, chunk, host_GBps, dma_GBps):
    """Seconds to stage nbytes through pinned buffers, chunk by chunk (nbytes a multiple of chunk)."""
    k = nbytes // chunk                                   # number of chunks
    h = chunk / (host_GBps * 1e9)                         # CPU copy of one chunk into a staging buffer
    d = chunk / (dma_GBps * 1e9)                          # DMA of one chunk to the GPU
    return h + d + (k - 1) * max(h, d)                    # fill, then one chunk per slower stage
