"""tspcl: travelling-salesman search in OpenCL kernels, driven from Python."""

__version__ = "0.1.0"
