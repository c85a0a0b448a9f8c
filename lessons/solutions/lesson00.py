# Solutions to lesson 00's exercise (00-start-here.ipynb).
# helpers.exercises.solution("00", NAME) returns one section; an instructor may delete this folder.

# exercise: my_l2_mib
my_l2_mib = course.attributes["L2_CACHE_SIZE"] / 2**20   # bytes -> MiB: 1 MiB = 2**20 bytes
