# bank: visits the whole (2r+1)^2 window, skips pixels outside the image with an if, accumulates in float64 and divides by the window's in-bounds area; correct, full marks.
# naive: none
@cuda.jit
def blur_kernel(image, out, radius):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < image.shape[0] and col < image.shape[1]:
        total = 0.0
        count = 0
        for dr in range(-radius, radius + 1):
            for dc in range(-radius, radius + 1):
                r, c = row + dr, col + dc
                if r >= 0 and r < image.shape[0] and c >= 0 and c < image.shape[1]:
                    total += image[r, c]
                    count += 1
        out[row, col] = total / count
