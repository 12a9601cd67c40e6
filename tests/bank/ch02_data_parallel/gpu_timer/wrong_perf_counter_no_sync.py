# bank: time.perf_counter around each launch without synchronizing: it measures the launch (microseconds), not the kernel
# naive: none
import time


def time_ms(launch, repeats):
    launch()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        launch()
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times))
