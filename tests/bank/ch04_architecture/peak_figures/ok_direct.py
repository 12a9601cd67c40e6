# bank: SMs × lanes × 2 × clock in Hz, and 2 × memory clock in Hz × bus bytes, as the text counts them; correct, full marks.
# naive: none
def peak_figures(sm_count, fp32_lanes_per_sm, clock_khz, memory_clock_khz, bus_width_bits):
    flops = sm_count * fp32_lanes_per_sm * 2 * clock_khz * 1e3
    bytes_per_second = 2 * memory_clock_khz * 1e3 * bus_width_bits / 8
    return flops, bytes_per_second
