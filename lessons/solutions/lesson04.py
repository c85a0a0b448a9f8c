# Solutions to lesson 04's exercises (04-map-pages-on-the-gpu.ipynb).
# helpers.exercises.solution("04", NAME) returns one section; an instructor may delete this folder.

# exercise: device_address
def device_address(a, i, d_a):
    """The address a CUDA kernel uses for a[i], where the driver mapped a[0] at d_a."""
    return d_a + i * a.itemsize      # a page table moves whole pages: the offset of a[i] stays the same

# exercise: same_address
def same_address(allocation, attributes):
    """Whether the documents promise that the driver's device pointer equals the host pointer."""
    if not attributes["UNIFIED_ADDRESSING"]:
        return False                                      # no UVA: a separate device address
    if allocation == "mapped + write-combined":
        return False                                      # documented: a distinct device address
    if allocation.startswith("registered"):
        return bool(attributes["CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"])
    return True                                           # cudaHostAlloc memory, mapped flag or not
