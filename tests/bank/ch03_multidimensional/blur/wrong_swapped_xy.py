# bank: takes the row from x and the column from y; the blur is right where it is written, but on non-square images part of the output is never written; it must lose the points.
# naive: none
@cuda.jit
def blur_kernel(image, out, radius):
    row, col = cuda.grid(2)
    height, width = image.shape
    if row < height and col < width:
        total = np.float32(0)
        count = 0
        for r in range(max(row - radius, 0), min(row + radius + 1, height)):
            for c in range(max(col - radius, 0), min(col + radius + 1, width)):
                total += image[r, c]
                count += 1
        out[row, col] = total / count
