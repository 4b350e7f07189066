"""Array kernels: NumPy-level helpers shared by the backward engine and the ops.

This package sits below everything that knows about tensors: its modules import NumPy and
nothing of tapegrad's, so the engine (autograd/engine.py) and the op families (ops/) can both
import it without importing each other.

    sums.py           the fast axis sum, torch's order for short float32 totals, sum_to_array
    low_precision.py  float32 <-> float16/bfloat16 casts, rounded to nearest even
"""
