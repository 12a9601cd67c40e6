# bank: events and a warm-up, but the mean of the runs: every third run is slow, so the mean is far above the median
# naive: none
def time_ms(launch, repeats):
    launch()
    cuda.synchronize()
    start, end = cuda.event(), cuda.event()
    total = 0.0
    for _ in range(repeats):
        start.record()
        launch()
        end.record()
        end.synchronize()
        total += cuda.event_elapsed_time(start, end)
    return total / repeats
