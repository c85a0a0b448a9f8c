# Solutions to lesson 10's exercises (10-model-zero-copy-reads.ipynb).
# helpers.exercises.solution("10", NAME) returns one section; an instructor may delete this folder.

# exercise: link_bytes
import numpy as np
def link_bytes(addresses, size, h):
    """Bytes on the link for loads of `size` bytes at `addresses`: one read per distinct line (assumption 1),
    carrying its span of sectors (assumption 2), plus h per read."""
    addresses = np.asarray(addresses, dtype=np.int64)
    sectors = np.unique(np.concatenate([addresses // 32, (addresses + size - 1) // 32]))
    lines = sectors // 4                       # 4 sectors of 32 bytes per 128-byte line
    span = 0
    for line in np.unique(lines):
        mine = sectors[lines == line]
        span += mine.max() - mine.min() + 1    # first to last touched sector, gaps included
    return 32 * span + h * len(np.unique(lines))

# exercise: predicted_seconds
def predicted_seconds(counts, model):
    """The model's time: the largest of the link, request and half-line times, plus the launch time."""
    on_link = (32 * counts.request_sectors + model.overhead_bytes * counts.requests) / (model.link_GBps * 1e9)
    on_requests = counts.requests / model.request_rate
    on_halves = counts.half_lines / model.half_line_rate
    return max(on_link, on_requests, on_halves) + model.launch_seconds

# exercise: predict_stride
import numpy as np
def predict_useful_GBps(sweep, stride):
    """Useful GB/s at a stride of 32 floats or more, from the read-request rate of the sweep's plateau."""
    plateau = [row for row in sweep.select(memory="zero_copy") if row["stride"] >= 32]  # a line per float
    requests_per_s = np.median([row["count"] / np.median(row["seconds"]) for row in plateau])  # a request per float
    return 4 * requests_per_s / 1e9        # 4 useful bytes per request, whatever the stride
