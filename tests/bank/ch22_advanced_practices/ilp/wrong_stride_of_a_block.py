# bank: steps by blockDim.x instead of the grid's width, so blocks overlap each other's elements and the last three quarters of the array are never reached; it must get no points.
# naive: none
@cuda.jit
def ilp_kernel(x, out, a, b):
    t = cuda.grid(1)
    w = cuda.blockDim.x
    for k in range(4):
        if t + k * w < x.size:
            out[t + k * w] = a * x[t + k * w] + b
