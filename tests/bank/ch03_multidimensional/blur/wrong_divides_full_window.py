# bank: adds only the in-bounds pixels but always divides by (2r+1)^2, so every pixel near an edge comes out too dark; it must lose the points.
# naive: none
@cuda.jit
def blur_kernel(image, out, radius):
    col, row = cuda.grid(2)
    height, width = image.shape
    if row < height and col < width:
        total = np.float32(0)
        for r in range(max(row - radius, 0), min(row + radius + 1, height)):
            for c in range(max(col - radius, 0), min(col + radius + 1, width)):
                total += image[r, c]
        out[row, col] = total / ((2 * radius + 1) * (2 * radius + 1))
