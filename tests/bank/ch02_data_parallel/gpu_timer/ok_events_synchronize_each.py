# bank: one pair of events used again for every run, the device synchronized after each, Event.elapsed_time and statistics.median: correct
# naive: none
import statistics


def time_ms(launch, repeats):
    launch()
    cuda.synchronize()
    start = cuda.event()
    end = cuda.event()
    times = []
    for _ in range(repeats):
        start.record()
        launch()
        end.record()
        cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)
