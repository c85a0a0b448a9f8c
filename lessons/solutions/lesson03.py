# Solutions to lesson 03's exercises (03-map-pages-on-the-cpu.ipynb).
# helpers.exercises.solution("03", NAME) returns one section; an instructor may delete this folder.

# exercise: physical_address
def physical_address(address, start, pfns):
    """Physical address of the byte at virtual `address`; None if its page has no frame."""
    pfn = pfns[(address - start) // PAGE]     # the frame of the page that holds the byte
    if pfn is None:
        return None                           # never touched: no frame yet
    return pfn * PAGE + address % PAGE        # the offset in the page passes through

# exercise: could_be_huge
def could_be_huge(address, pfns):
    """False if these frames rule out one 2 MiB huge page behind the buffer at `address`."""
    per_huge = zc.pages.HUGE_PAGE_SIZE // PAGE            # 2 MiB / 4 KiB: 512 pages
    first_page = address // PAGE
    if pfns[0] % per_huge != first_page % per_huge:
        return False                                      # wrong offset in its 2 MiB block
    return all(pfn == pfns[0] + i for i, pfn in enumerate(pfns))   # ascending, one by one
