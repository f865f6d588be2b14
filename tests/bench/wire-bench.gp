# SPDX-License-Identifier: GPL-2.0
#
# The plot of the wire benchmark (tests/bench/wire-bench.sh), made by
# tests/bench/run.sh:
#   gnuplot -e "datafile='build/bench/wire-bench.dat'; \
#               outfile='build/bench/wire-bench.png'; subtitle='...'" \
#           tests/bench/wire-bench.gp
# Throughput in MB/s against the message size, both axes logarithmic:
# one colour per driver pair (softhca <-> softhca, rxe <-> rxe), one dash
# and point type per operation (ib_write_bw, ib_read_bw, ib_send_bw).
# Points at the median, error bars from the lowest to the highest run.

if (!exists("datafile")) datafile = 'build/bench/wire-bench.dat'
if (!exists("outfile")) outfile = 'build/bench/wire-bench.png'
if (!exists("subtitle")) subtitle = ''

set terminal pngcairo noenhanced size 900,650 font ",10"
set output outfile

# The header line names the series: "# size(bytes)
# softhca-write_bw(median,min,max) rxe-write_bw(...) softhca-read_bw(...)
# ...": per operation the drivers, nd of them.
names = system("sed -n 's/^# size(bytes) //p' '" . datafile . "' | head -n 1")
ns = words(names)
nd = (strstrt(names, "rxe-") > 0 && strstrt(names, "softhca-") > 0) ? 2 : 1
name(i) = substr(word(names, i), 1, strstrt(word(names, i), "(") - 1)
# the first data column of series i
dcol(i) = 2 + 3 * (i - 1)
# the colour of the driver, the dash of the operation
set linetype 1 lc rgb "#1f60c0" dt 1 pt 5
set linetype 2 lc rgb "#d03020" dt 1 pt 5
set linetype 3 lc rgb "#1f60c0" dt 2 pt 6
set linetype 4 lc rgb "#d03020" dt 2 pt 6
set linetype 5 lc rgb "#1f60c0" dt 3 pt 8
set linetype 6 lc rgb "#d03020" dt 3 pt 8
drv(i) = (strstrt(word(names, i), "rxe-") == 1) ? 2 : 1
op(i) = int((i - 1) / nd)

set title "RoCE v2 across two QEMU guests: softhca <-> softhca vs rxe <-> rxe (perftest)\n" . subtitle
set xlabel "message size"
set ylabel "MB/s (10^6 bytes/s), median and range of the runs"
set logscale xy
set format y "%g"
set grid xtics ytics mytics
set datafile missing "NaN"
set xtics ("64 B" 64, "4 KiB" 4096, "64 KiB" 65536, "1 MiB" 1048576)
set xrange [45:1482910]
set key at graph 0.5, -0.1 center top horizontal maxrows 2
set bmargin 7
plot for [i=1:ns] datafile using 1:dcol(i):dcol(i)+1:dcol(i)+2 \
	with yerrorlines lw 2 lt (2 * op(i) + drv(i)) title name(i)
