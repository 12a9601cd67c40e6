# bank: forgets that the memory moves data on both clock edges, so the bandwidth is half the peak; it must lose the points.
# naive: none
def peak_figures(sm_count, fp32_lanes_per_sm, clock_khz, memory_clock_khz, bus_width_bits):
    return (2 * sm_count * fp32_lanes_per_sm * clock_khz * 1e3,
            memory_clock_khz * 1e3 * bus_width_bits / 8)
