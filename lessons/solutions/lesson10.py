# Solutions to lesson 10's exercises (10-model-zero-copy-reads.ipynb).
# helpers.exercises.solution("10", NAME) returns one section; an instructor may delete this folder.

# exercise: link_bytes
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
    """The model's time: the larger of the link time and the request time, plus the launch time."""
    on_link = (32 * counts.request_sectors + model.overhead_bytes * counts.requests) / (model.link_GBps * 1e9)
    on_requests = counts.requests / model.request_rate
    return max(on_link, on_requests) + model.launch_seconds
