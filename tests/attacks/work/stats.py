# The mean and standard deviation of the first 1,000 squares.
import statistics
xs = [i * i for i in range(1, 1001)]
print("TASK-OK:stats mean=%s stdev=%.6f" % (statistics.mean(xs), statistics.stdev(xs)), flush=True)
