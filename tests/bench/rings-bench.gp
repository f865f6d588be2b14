# SPDX-License-Identifier: GPL-2.0
#
# The plot of the userspace ring benchmark (tests/bench/rings-bench.sh),
# made by tests/bench/run.sh:
#   gnuplot -e "datafile='build/bench/rings-bench.dat'; \
#               outfile='build/bench/rings-bench.png'; subtitle='...'" \
#           tests/bench/rings-bench.gp
# Two panels against the message size, all axes logarithmic: left the
# message rate of ib_write_bw and ib_send_bw (Mmsg/s), right the typical
# one-way latency of ib_write_lat and ib_send_lat (microseconds); one
# colour per column (softhca with mapped rings, softhca with a system call
# per verb, rxe), one dash per operation. Points at the median, error
# bars from the lowest to the highest run.

if (!exists("datafile")) datafile = 'build/bench/rings-bench.dat'
if (!exists("outfile")) outfile = 'build/bench/rings-bench.png'
if (!exists("subtitle")) subtitle = ''

set terminal pngcairo noenhanced size 1300,650 font ",10"
set output outfile

# one colour per column, one dash and point type per operation
set linetype 1 lc rgb "#1f60c0" dt 1 pt 5
set linetype 2 lc rgb "#1f60c0" dt 2 pt 6
set linetype 3 lc rgb "#e08020" dt 1 pt 5
set linetype 4 lc rgb "#e08020" dt 2 pt 6
set linetype 5 lc rgb "#d03020" dt 1 pt 5
set linetype 6 lc rgb "#d03020" dt 2 pt 6

# The header line names the series: "# size(bytes) rings-write_bw(median,
# min,max) syscalls-write_bw(...) rxe-write_bw(...) rings-send_bw(...)
# ... rxe-send_lat(...)": per tool (write_bw, send_bw, write_lat,
# send_lat) the columns, nc of them.
names = system("sed -n 's/^# size(bytes) //p' '" . datafile . "' | head -n 1")
nc = words(names) / 4
name(i) = substr(word(names, i), 1, strstrt(word(names, i), "(") - 1)
# the first data column of series i (1-based: tool t, column c)
dcol(t, c) = 2 + 3 * ((t - 1) * nc + c - 1)

set multiplot layout 1, 2 title "Userspace data path: mapped rings vs a system call per verb vs rxe (perftest, --use_old_post_send)\n" . subtitle
set xlabel "message size"
set logscale xy
set format y "%g"
set grid xtics ytics mytics
set datafile missing "NaN"
set xtics ("64 B" 64, "4 KiB" 4096, "1 MiB" 1048576)
set xrange [45:1482910]
set key at graph 0.5, -0.14 center top horizontal maxrows 3
set bmargin 9

set title "message rate (ib_write_bw, ib_send_bw)"
set ylabel "Mmsg/s, median and range of the runs"
plot for [c=1:nc] for [t=1:2] datafile using 1:dcol(t, c):dcol(t, c)+1:dcol(t, c)+2 \
	with yerrorlines lw 2 lt 2 * (c - 1) + t title name((t - 1) * nc + c)

set title "typical latency, one way (ib_write_lat, ib_send_lat)"
set ylabel "microseconds, median and range of the runs"
plot for [c=1:nc] for [t=3:4] datafile using 1:dcol(t, c):dcol(t, c)+1:dcol(t, c)+2 \
	with yerrorlines lw 2 lt 2 * (c - 1) + t - 2 title name((t - 1) * nc + c)

unset multiplot
