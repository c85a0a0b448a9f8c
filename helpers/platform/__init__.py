"""What this machine is for the course, and what that changes in each lesson.

``machine``     bare metal or a virtual machine, with or without an IOMMU
``pcie``        the GPU's PCIe link and its nominal rate
``facts``       the machine read once into plain data (GPU, toolkit, operating system, memory)
``doctor``      pure judgements of those facts: the toolkit, the platform, every lesson's status
``notes``       the sentence a lesson shows about this machine
``linux_only``  the ``%%linux_only`` cell magic, for cells that read /proc
``provenance``  where and how a live record is made (GPU, driver, CUDA, link, CPU)
"""
