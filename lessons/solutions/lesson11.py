# Solutions to lesson 11's exercises (11-overlap-copies-with-streams.ipynb).
# helpers.exercises.solution("11", NAME) returns one section; an instructor may delete this folder.

# exercise: double_buffered_add
import numpy as np
def double_buffered_add(drv, add, a, b, c, chunk, buffers):
    """c = a + b, chunk by chunk: chunk i uses buffers[i % 2] = (da, db, dc) and streams[i % 2]."""
    streams = [drv.Stream(), drv.Stream()]                  # made once, one per buffer set
    for i, first in enumerate(range(0, a.size, chunk)):
        last = min(first + chunk, a.size)                   # the last chunk may be shorter
        m, s = last - first, streams[i % 2]
        da, db, dc = buffers[i % 2]
        drv.memcpy_htod_async(da, a[first:last], s)         # in, on this chunk's stream
        drv.memcpy_htod_async(db, b[first:last], s)
        add(da, db, dc, np.int32(m), block=(256, 1, 1), grid=((m + 255) // 256, 1), stream=s)
        drv.memcpy_dtoh_async(c[first:last], dc, s)         # out, after the kernel in stream order
    for s in streams:
        s.synchronize()                                     # c is complete only now

# exercise: transfer_seconds
def transfer_seconds(n, link_GBps, both_directions):
    """Seconds to move a and b in and c out (float32, n elements each) at link_GBps per direction."""
    bytes_in, bytes_out = 8 * n, 4 * n                      # a and b in, c out
    if both_directions:
        return max(bytes_in, bytes_out) / (link_GBps * 1e9) # the busier direction sets the pace
    return (bytes_in + bytes_out) / (link_GBps * 1e9)       # one after the other
