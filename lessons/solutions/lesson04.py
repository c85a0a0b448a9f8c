# Solutions to lesson 04's exercises (04-map-pages-on-the-gpu.ipynb).
# helpers.exercises.solution("04", NAME) returns one section; an instructor may delete this folder.

# exercise: page_and_offset
def page_and_offset(address, page_size=4096):
    """(page number, offset in that page) of a virtual address."""
    return address // page_size, address % page_size     # or divmod(address, page_size)

# exercise: same_address
def same_address(allocation, attributes):
    """Predict whether the driver's device pointer equals the host pointer."""
    if not attributes["UNIFIED_ADDRESSING"]:
        return False                                      # no UVA: a separate device address
    if allocation.startswith("registered"):
        return bool(attributes["CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"])
    return True                                           # cudaHostAlloc memory, mapped flag or not
