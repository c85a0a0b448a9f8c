# Solutions to lesson 08's exercises (08-keep-enough-bytes-in-flight.ipynb).
# helpers.exercises.solution("08", NAME) returns one section; an instructor may delete this folder.

# exercise: threads_for_link
def threads_for_link(link_GBps, latency_ns, bytes_per_thread):
    """Threads needed to fill the link when each keeps bytes_per_thread in flight (Little's law)."""
    bytes_in_flight = link_GBps * latency_ns      # GB/s x ns = bytes
    return bytes_in_flight / bytes_per_thread

# exercise: read_inflight
READ_INFLIGHT_SOURCE = r"""
extern "C" __global__ void read_inflight(const float4 *__restrict__ src, unsigned long long n4, float *partial) {
    unsigned long long tid = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i = tid;
    float sum = 0.0f;
    for (; i + 3 * step < n4; i += 4 * step) {      // four independent loads in flight per thread
        float4 a = src[i];
        float4 b = src[i + step];
        float4 c = src[i + 2 * step];
        float4 d = src[i + 3 * step];
        sum += ((a.x + a.y) + (a.z + a.w)) + ((b.x + b.y) + (b.z + b.w))
             + ((c.x + c.y) + (c.z + c.w)) + ((d.x + d.y) + (d.z + d.w));
    }
    for (; i < n4; i += step) {                      // the tail: what is left of n4
        float4 a = src[i];
        sum += (a.x + a.y) + (a.z + a.w);
    }
    partial[tid] = sum;
}
"""

# exercise: reread_load
# The re-reads should be served on the GPU: section 2 found that the SM's L1 / read-only path keeps mapped memory for
# the SM that fetched it (__ldg), and the L2 does not (__ldcg). A plain load (ld.global, cache operator .ca) also
# goes through the L1.
REREAD_SOURCE = r"""
extern "C" __global__ void reread(const float4 *src, unsigned long long chunk4, int passes, float *partial) {
    auto base = src + blockIdx.x * chunk4;           // this block's own chunk
    float sum = 0.0f;
    for (int p = 0; p < passes; ++p) {
        for (unsigned long long i = threadIdx.x; i < chunk4; i += blockDim.x) {
            float4 v = __ldg(&base[i]);               // the read-only path: the SM's L1 serves the re-reads
            sum += (v.x + v.y) + (v.z + v.w);
        }
    }
    partial[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}
"""
