# bank: takes the bus width in bits as bytes (no division by 8), an 8× too large bandwidth; it must lose the points.
# naive: none
def peak_figures(sm_count, fp32_lanes_per_sm, clock_khz, memory_clock_khz, bus_width_bits):
    return (2 * sm_count * fp32_lanes_per_sm * clock_khz * 1e3,
            2 * memory_clock_khz * 1e3 * bus_width_bits)
