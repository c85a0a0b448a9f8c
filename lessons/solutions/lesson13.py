# Solutions to lesson 13's exercises (13-use-write-combined-and-registered-memory.ipynb).
# helpers.exercises.solution("13", NAME) returns one section; an instructor may delete this folder.

# exercise: reads_needed
import math
def reads_needed(register_seconds, read_seconds, share=0.1):
    """Fewest zero-copy reads after which registering once is at most `share` of the total time."""
    # register / (register + k * read) <= share  <=>  k >= register * (1 - share) / (share * read)
    return math.ceil(register_seconds * (1 - share) / (share * read_seconds))

# exercise: neighbours_pinned
def neighbours_pinned(address, nbytes, page_size=4096):
    """(bytes before, bytes after) the range [address, address + nbytes) that the driver pins with it."""
    before = address % page_size                  # from the page boundary below the first byte up to it
    after = -(address + nbytes) % page_size       # from the end up to the next page boundary (0 on one)
    return before, after
