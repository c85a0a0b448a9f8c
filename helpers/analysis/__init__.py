"""What the measurements mean: the PCIe model, the sector explorer, a record's headline and its targets.

``pcie_model``       zero-copy reads over PCIe: counts from traces first, then time
``sector_explorer``  which 32-byte sectors and 128-byte lines one warp touches, with the model's prediction
``spread``           a figure's range across the committed records, and the rule for saying two figures differ
``summary``          a record's headline figures, your GPU against the reference
``targets``          the course's H200 performance targets, checked against a record
"""
