# Solutions to lesson 07's exercises (07-measure-latency.ipynb).
# helpers.exercises.solution("07", NAME) returns one section; an instructor may delete this folder.

# exercise: chase
def chase(table, start, steps):
    """The element the pointer chase reaches after `steps` dependent loads, as the kernel computes it."""
    j = int(start)
    for _ in range(steps):
        j = int(table[j])      # the next address is the value just loaded
    return j

# exercise: orders_of_magnitude
def orders_of_magnitude(slow_ns, fast_ns):
    """How many factors of 10 separate two latencies."""
    return np.log10(slow_ns / fast_ns)
