"""The CPU's and the GPU's view of memory, and the driver calls behind them.

``pages``       pages, frames, locking and page-aligned arrays, read from /proc (any Linux machine)
``gpu``         the one CUDA context; pinned, mapped and registered allocations; device pointers
``driver_api``  the few CUDA driver calls PyCUDA does not wrap usably (cuMemHostRegister...), through ctypes
``timing``      CUDA-event timing of the work alone, every repeat kept, inside the measurement queue's slot
"""
