# bank: right runs and the median, then divided by 1000 as if the events gave milliseconds and seconds were asked for
# naive: none
def time_ms(launch, repeats):
    launch()
    cuda.synchronize()
    start, end = cuda.event(), cuda.event()
    times = []
    for _ in range(repeats):
        start.record()
        launch()
        end.record()
        end.synchronize()
        times.append(cuda.event_elapsed_time(start, end))
    return float(np.median(times)) / 1000
