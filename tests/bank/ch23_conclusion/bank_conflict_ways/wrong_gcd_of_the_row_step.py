# bank: the rule for a whole-warp row, gcd(x_step, 32), whatever the block's width and y_step: right for width 32, wrong when a warp spans several rows; it must lose the points.
# naive: none
import math


def bank_conflict_ways(width, x_step, y_step):
    return math.gcd(x_step, 32) if x_step else 1
