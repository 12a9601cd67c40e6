# bank: a grid-index thread per body that skips the pair j = i, divides the mass by r² · r, and sums in float64 before one float32 store per component; correct, full marks.
# naive: none
import math


@cuda.jit
def nbody_gather_kernel(pos, mass, eps2, acc):
    i = cuda.grid(1)
    if i >= pos.shape[0]:
        return
    a = cuda.local.array(3, np.float64)
    for c in range(3):
        a[c] = 0.0
    for j in range(pos.shape[0]):
        if j == i:
            continue
        dx = float(pos[j, 0]) - float(pos[i, 0])
        dy = float(pos[j, 1]) - float(pos[i, 1])
        dz = float(pos[j, 2]) - float(pos[i, 2])
        r2 = dx * dx + dy * dy + dz * dz + float(eps2)
        s = float(mass[j]) / (r2 * math.sqrt(r2))
        a[0] += dx * s
        a[1] += dy * s
        a[2] += dz * s
    for c in range(3):
        acc[i, c] = a[c]
