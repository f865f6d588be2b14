# SPDX-License-Identifier: GPL-2.0
#
# The plot of the FRWR cycle benchmark (tests/bench/frwr-bench.sh), made
# by tests/bench/run.sh:
#   gnuplot -e "datafile='build/bench/frwr-bench.dat'; \
#               outfile='build/bench/frwr-bench.png'; subtitle='...'" \
#           tests/bench/frwr-bench.gp
# MB/s of data against the I/O size, both logarithmic: the write and read
# I/Os (remote invalidation) of each device pair, and memcpy() of the
# same pages (the floor). Points at the median, error bars from the
# slowest to the fastest run.

if (!exists("datafile")) datafile = 'build/bench/frwr-bench.dat'
if (!exists("outfile")) outfile = 'build/bench/frwr-bench.png'
if (!exists("subtitle")) subtitle = ''

set terminal pngcairo noenhanced size 1000,650 font ",10"
set output outfile
set title "FRWR cycle per I/O as nvme-rdma runs it: ib_map_mr_sg, REG_MR,\nRDMA READ/WRITE through the rkey, SEND_WITH_INV\n" . subtitle
set xlabel "I/O size"
set ylabel "MB/s of data, median and range of the runs"
set logscale xy
set grid xtics ytics mytics
set datafile missing "NaN"
set xtics ("4 KiB" 4096, "64 KiB" 65536, "1 MiB" 1048576)
set xrange [2896:1482910]
set key inside right bottom vertical opaque box

# The header line names the series: "# size(bytes) softhca0-write(median,
# min,max) softhca0-read(...) rxe0-write(...) rxe0-read(...) [more pairs]
# memcpy(...)": the first two pairs are plotted, and memcpy, the last.
names = system("sed -n 's/^# size(bytes) //p' '" . datafile . "' | head -n 1")
name(i) = substr(word(names, i), 1, strstrt(word(names, i), "(") - 1) . " I/O"
mc = 2 + 3 * (words(names) - 1)
plot datafile using 1:2:3:4 with yerrorlines lw 2 title name(1), \
	'' using 1:5:6:7 with yerrorlines lw 2 title name(2), \
	'' using 1:8:9:10 with yerrorlines lw 2 dt 2 title name(3), \
	'' using 1:11:12:13 with yerrorlines lw 2 dt 2 title name(4), \
	'' using 1:mc:mc+1:mc+2 with yerrorlines lw 2 lc rgb "black" \
		title "memcpy of the same pages (floor)"
