# SPDX-License-Identifier: GPL-2.0
#
# The latency plot of the data-path benchmark (tests/bench/dp-bench.sh,
# the kernel cells of shca_dp_bench.ko), made by tests/bench/run.sh:
#   gnuplot -e "datafile='build/bench/dp-bench-lat.dat'; \
#               outfile='build/bench/dp-bench-lat.png'; subtitle='...'" \
#           tests/bench/dp-bench-lat.gp
# One-way latency (half a ping-pong round trip) in microseconds against
# the message size, both logarithmic: SEND and RDMA WRITE of each device
# pair (one colour per pair, one dash per operation), and the time of one
# memcpy() of that size (the floor). Points at the median, error bars
# from the fastest to the slowest run.

if (!exists("datafile")) datafile = 'build/bench/dp-bench-lat.dat'
if (!exists("outfile")) outfile = 'build/bench/dp-bench-lat.png'
if (!exists("subtitle")) subtitle = ''

set terminal pngcairo noenhanced size 1000,700 font ",10"
set output outfile
set title "RC ping-pong latency through kernel verbs (shca_dp_bench.ko) vs one memcpy\n" . subtitle
set xlabel "message size"
set ylabel "microseconds one way, median and range of the runs"
set logscale xy
set format y "%g"
set grid xtics ytics mytics
set datafile missing "NaN"
set xtics ("64 B" 64, "4 KiB" 4096, "64 KiB" 65536, "1 MiB" 1048576)
set xrange [45:1482910]
set key at screen 0.5, 0.01 center bottom horizontal maxrows 3
set bmargin 8

# one colour per pair, one dash and point type per operation (2 per pair)
set linetype 1 lc rgb "#1f60c0" dt 1 pt 5
set linetype 2 lc rgb "#1f60c0" dt 2 pt 6
set linetype 3 lc rgb "#d03020" dt 1 pt 5
set linetype 4 lc rgb "#d03020" dt 2 pt 6
set linetype 5 lc rgb "#20a040" dt 1 pt 5
set linetype 6 lc rgb "#20a040" dt 2 pt 6
set linetype 7 lc rgb "#a040c0" dt 1 pt 5
set linetype 8 lc rgb "#a040c0" dt 2 pt 6

# The header line names the series: "# size(bytes) softhca-SEND(median,
# min,max) softhca-WRITE(...) rxe-SEND(...) rxe-WRITE(...) memcpy(...)":
# two per pair, memcpy last.
names = system("sed -n 's/^# size(bytes) //p' '" . datafile . "' | head -n 1")
name(i) = substr(word(names, i), 1, strstrt(word(names, i), "(") - 1) . " latency"
n = words(names)
plot for [i=1:n-1] datafile using 1:3*i-1:3*i:3*i+1 with yerrorlines \
	lw 2 lt i \
	title name(i), \
	'' using 1:3*n-1:3*n:3*n+1 with yerrorlines lw 2 lc rgb "black" \
	title "one memcpy (kernel)"
