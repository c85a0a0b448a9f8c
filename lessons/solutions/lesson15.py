# Solutions to the platforms lesson's exercises (15-take-zero-copy-beyond-one-pcie-gpu.ipynb).
# helpers.exercises.solution("15", NAME) returns one section; an instructor may delete this folder.

# exercise: platform_class
def platform_class(attributes):
    """The zero-copy platform class a GPU's attributes describe."""
    if attributes["INTEGRATED"]:
        return "integrated"
    if attributes["PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES"] and attributes["HOST_NATIVE_ATOMIC_SUPPORTED"]:
        return "coherent_c2c"
    return "discrete_pcie"

# exercise: passes_until_migration_wins
def passes_until_migration_wins(zero_copy, migrating):
    """Fewest whole passes at which migrating managed memory takes less time than zero-copy, or None."""
    (z1, z8), (m1, m8) = zero_copy, migrating
    z_step, m_step = (z8 - z1) / 7, (m8 - m1) / 7      # the cost of one more pass on each side
    for k in range(1, 10**6):
        if m1 + (k - 1) * m_step < z1 + (k - 1) * z_step:
            return k
        if m_step >= z_step:
            return None                                   # migrating never catches up
    return None
