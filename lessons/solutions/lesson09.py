# Solutions to lesson 09's exercises (09-coalesce-and-align-accesses.ipynb).
# helpers.exercises.solution("09", NAME) returns one section; an instructor may delete this folder.

# exercise: sectors_per_warp
def sectors_per_warp(stride, offset, width=1):
    """Distinct 32-byte sectors one warp touches: thread t reads 4 * width bytes at element offset + t * stride."""
    size = 4 * width
    first_byte = (offset + np.arange(32) * stride) * size
    last_byte = first_byte + size - 1
    return len(set(first_byte // 32) | set(last_byte // 32))

# exercise: coalesce
COPY_SOURCE = r"""
// Copy a rows x cols row-major matrix: src is zero-copy (mapped host) memory.
extern "C" __global__ void copy_matrix(const float *src, float *dst, int rows, int cols) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < rows * cols) {
        int r = t / cols;   // consecutive threads go ALONG a row:
        int c = t % cols;   // a warp reads 128 contiguous bytes
        dst[r * cols + c] = src[r * cols + c];
    }
}
"""
