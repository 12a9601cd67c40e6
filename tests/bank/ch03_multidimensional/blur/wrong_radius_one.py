# bank: ignores `radius` and always blurs a 3 x 3 window; right only for radius 1; it must lose the points.
# naive: none
@cuda.jit
def blur_kernel(image, out, radius):
    col, row = cuda.grid(2)
    height, width = image.shape
    if row < height and col < width:
        total = np.float32(0)
        count = 0
        for r in range(max(row - 1, 0), min(row + 2, height)):
            for c in range(max(col - 1, 0), min(col + 2, width)):
                total += image[r, c]
                count += 1
        out[row, col] = total / count
