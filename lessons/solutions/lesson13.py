# Solutions to lesson 13's exercises (13-use-write-combined-and-registered-memory.ipynb).
# helpers.exercises.solution("13", NAME) returns one section; an instructor may delete this folder.

# exercise: reads_needed
def reads_needed(register_seconds, read_seconds, share=0.1):
    """Fewest zero-copy reads after which registering once is at most `share` of the total time."""
    # register / (register + k * read) <= share  <=>  k >= register * (1 - share) / (share * read)
    return math.ceil(register_seconds * (1 - share) / (share * read_seconds))

# exercise: can_register
def can_register(array, page_size=4096):
    """True if cuMemHostRegister may pin `array` as it is: one range of whole pages."""
    contiguous = array.flags.c_contiguous or array.flags.f_contiguous
    return bool(contiguous and array.nbytes > 0
                and array.ctypes.data % page_size == 0 and array.nbytes % page_size == 0)
