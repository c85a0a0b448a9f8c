"""Sharing one GPU server among learners: the measurement queue, the page-locked memory budget, other programs.

``gpu_queue``      the timed sections of every course process take turns on a GPU
``pinned_budget``  a machine-wide budget of page-locked memory every learner's process reserves from
``contention``     programs outside the course that hold the same GPU (NVML)
``class_record``   the instructor's record of this GPU that a class is shown, and the checks that trust it

Below the memory layer: nothing here imports the GPU helpers; they call in.
"""
