# bank: each thread takes four consecutive elements 4t .. 4t + 3, each guarded (right, though a warp's loads are strided by 16 bytes, not coalesced: slower on a GPU, not wrong); it must get full marks.
# naive: none
@cuda.jit
def ilp_kernel(x, out, a, b):
    base = 4 * cuda.grid(1)
    for k in range(4):
        i = base + k
        if i < x.size:
            out[i] = a * x[i] + b
