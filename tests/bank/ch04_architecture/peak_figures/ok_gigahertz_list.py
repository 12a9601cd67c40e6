# bank: the clocks converted to GHz first and the bus to bytes, returned as a list rather than a tuple; algebraically equal, full marks.
# naive: none
def peak_figures(sm_count, fp32_lanes_per_sm, clock_khz, memory_clock_khz, bus_width_bits):
    ghz = clock_khz / 1e6
    memory_ghz = memory_clock_khz / 1e6
    bus_bytes = bus_width_bits / 8
    return [2 * ghz * 1e9 * fp32_lanes_per_sm * sm_count, bus_bytes * memory_ghz * 1e9 * 2]
