# bank: a pair of events per run, all runs queued at once, one synchronize, then every elapsed time read: correct
# naive: none
def time_ms(launch, repeats):
    launch()                                   # warm-up: the first call compiles
    pairs = [(cuda.event(), cuda.event()) for _ in range(repeats)]
    for start, end in pairs:
        start.record()
        launch()
        end.record()
    cuda.synchronize()
    times = sorted(cuda.event_elapsed_time(start, end) for start, end in pairs)
    return times[len(times) // 2]
