"""A software prefetch for the kernels: ``prefetch(arr, i)`` issues LLVM's ``llvm.prefetch``.

The hash-table kernels probe large arrays at random; prefetching the slot ``PREFETCH_AHEAD``
items ahead lets those cache misses overlap instead of stalling one after another.
"""

from __future__ import annotations

from llvmlite import ir
from llvmlite.binding import llvm_version_info
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

#: How many items ahead the kernels prefetch (a cache miss takes about that many items' work)
PREFETCH_AHEAD = 16

# the intrinsic's name carries the pointer type: opaque ``ptr`` from LLVM 15 (llvmlite 0.44+)
_PREFETCH_INTRINSIC = "llvm.prefetch.p0" if llvm_version_info >= (15,) else "llvm.prefetch.p0i8"


@intrinsic
def prefetch(typingctx, arr, idx):
    """``prefetch(arr, i)``: hint the CPU to load the cache line of ``arr[i]`` (of ``arr[i, 0]``
    if 2-D). No effect on results; LLVM's ``llvm.prefetch`` (read, high locality)."""
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        aryty, idxty = signature.args
        ary = context.make_array(aryty)(context, builder, args[0])
        first = context.cast(builder, args[1], idxty, types.intp)
        rest = [context.get_constant(types.intp, 0)] * (aryty.ndim - 1)
        ptr = cgutils.get_item_pointer(
            context, builder, aryty, ary, [first, *rest], wraparound=False
        )
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, _PREFETCH_INTRINSIC)
        builder.call(
            fn,
            [
                builder.bitcast(ptr, i8p),
                ir.Constant(i32, 0),
                ir.Constant(i32, 3),
                ir.Constant(i32, 1),
            ],
        )
        return context.get_dummy_value()

    return sig, codegen
