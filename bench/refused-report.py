# SPDX-License-Identifier: Apache-2.0
"""refused-report.py - bench/refused-writes' summary: per-call cost, the build's overhead as
the median of per-pair ratios, and the cross-check calls x per-call cost.

usage: refused-report.py "C_ON..." "C_OFF..." "ON..." "OFF..." CALLS
"""
import statistics
import sys

c_on, c_off, on, off = ([float(x) for x in a.split()] for a in sys.argv[1:5])
calls = int(sys.argv[5])
per = statistics.median(c_on) - statistics.median(c_off)
print(f"per watched call: {statistics.median(c_on):.1f} us with the watch, "
      f"{statistics.median(c_off):.1f} us without: +{per:.1f} us")
ratios = sorted(a / b for a, b in zip(on, off))
r = statistics.median(ratios)
mon, moff = statistics.median(on), statistics.median(off)
print(f"build: median watch on {mon:.2f} s, off {moff:.2f} s; median of pair ratios {r:.4f} "
      f"(overhead {100 * (r - 1):+.1f} %, pairs from {100 * (ratios[0] - 1):+.1f} to "
      f"{100 * (ratios[-1] - 1):+.1f} %; target: under 2 %)")
print(f"cross-check: {calls} watched calls x {per:.1f} us = {calls * per / 1e3:.1f} ms "
      f"= {100 * calls * per / 1e6 / moff:.2f} % of the build")
