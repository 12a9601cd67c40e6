# bank: events and the median, but no warm-up: the first timed run includes the compilation (the median hides it in the value)
# naive: none
def time_ms(launch, repeats):
    start, end = cuda.event(), cuda.event()
    times = []
    for _ in range(repeats):
        start.record()
        launch()
        end.record()
        end.synchronize()
        times.append(cuda.event_elapsed_time(start, end))
    return float(np.median(times))
