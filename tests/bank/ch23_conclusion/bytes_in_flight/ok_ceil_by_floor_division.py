# bank: another order of the arithmetic and a ceiling written as -(-a // b) on floats, the loads from the threads needed; correct, full marks.
# naive: none
def bytes_in_flight(bandwidth, latency, sms, max_threads, bytes_per_load):
    threads = -(-(latency * (bandwidth / sms)) // bytes_per_load)
    loads = -(-threads // max_threads)
    return latency * bandwidth, threads, loads
