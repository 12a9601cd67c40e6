# bank: loops over the window clipped to the image with max/min and counts the pixels it adds; correct, full marks.
# naive: none
@cuda.jit
def blur_kernel(image, out, radius):
    col, row = cuda.grid(2)
    height, width = image.shape
    if row < height and col < width:
        total = np.float32(0)
        count = 0
        for r in range(max(row - radius, 0), min(row + radius + 1, height)):
            for c in range(max(col - radius, 0), min(col + radius + 1, width)):
                total += image[r, c]
                count += 1
        out[row, col] = total / count
