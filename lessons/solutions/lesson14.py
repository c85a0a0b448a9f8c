# Solutions to lesson 14's exercises (14-avoid-hazards-on-mapped-memory.ipynb).
# helpers.exercises.solution("14", NAME) returns one section; an instructor may delete this folder.

# exercise: incomplete
def incomplete(row):
    """Trials in which the host saw the flag before the whole payload was written (-1: flag never seen)."""
    return sum(0 <= w < row["n"] for w in row["written_at_flag"])

# exercise: publish
PUBLISH_SOURCE = r"""
extern "C" __global__ void publish(float *payload, unsigned long long n, float value,
                                   volatile unsigned int *flag, unsigned int raise) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        for (unsigned long long i = 0; i < n; ++i) {
            payload[i] = value;
        }
        __threadfence_system();   // every payload write is seen, by the host too, before the flag
        *flag = raise;            // volatile: a real store, now
    }
}
"""
