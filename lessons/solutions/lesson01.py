# Solutions to lesson 01's exercises (01-pin-host-memory.ipynb).
# helpers.exercises.solution("01", NAME) returns one section; an instructor may delete this folder.

# exercise: pages_spanned
def pages_spanned(address, nbytes, page_size):
    """How many pages the bytes [address, address + nbytes) touch (nbytes >= 1)."""
    first = address // page_size                      # the page of the first byte
    last = (address + nbytes - 1) // page_size        # the page of the last byte
    return last - first + 1                           # both included

# exercise: decode_entry
def decode_entry(entry):
    """(present, pfn) of one 64-bit /proc/self/pagemap entry."""
    present = bool((entry >> 63) & 1)                 # bit 63: a frame backs the page
    pfn = entry & ((1 << 55) - 1)                     # bits 0-54: the frame number (0 when hidden)
    return present, pfn
